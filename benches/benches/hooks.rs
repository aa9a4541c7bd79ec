//! What hooks add to a turn: a turn with no hook, with one plain-function hook (run on
//! the blocking pool) and with one `async` hook (polled on the turn's task). The model is
//! a closure answering at once, so the turn's own cost is what is measured.

use std::convert::Infallible;
use std::future::ready;

use benchmarks::{alternate, print_ratios, Contender};
use engine_core::{Linked, Registry};
use plugin_sdk::hook::Turn;

/// A registry with the bench plugin's hooks named `names` and nothing else.
fn registry(names: &[&str]) -> Registry {
    let hooks = names
        .iter()
        .map(|name| {
            plugin_sdk::linked_hooks()
                .find(|hook| hook.name == *name)
                .expect("the bench hook is linked")
        })
        .collect();
    Registry::build(Linked {
        hooks,
        ..Linked::default()
    })
    .expect("the bench hooks are valid")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let turn = Turn::new("bench");
    let turn_with = |registry: Registry| {
        let turn = turn.clone();
        let runtime = &runtime;
        move || {
            let outcome = runtime
                .block_on(registry.run_turn(&turn, "hello", false, |_| {
                    ready(Ok::<_, Infallible>(String::from("hi")))
                }))
                .expect("the model never fails here");
            std::hint::black_box(outcome);
        }
    };
    let medians = alternate(
        &mut [
            Contender {
                name: "turn without hooks (baseline)",
                run: Box::new(turn_with(registry(&[]))),
            },
            Contender {
                name: "turn with one async hook",
                run: Box::new(turn_with(registry(&["observe_async"]))),
            },
            Contender {
                name: "turn with one plain-fn hook",
                run: Box::new(turn_with(registry(&["observe_sync"]))),
            },
        ],
        41,
        2_000,
    );
    print_ratios("a turn through the hook pipeline", &medians);
}
