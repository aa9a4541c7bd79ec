//! What hooks add to a turn: a turn with no hook, with one plain-function hook (run on
//! the blocking pool) and with one `async` hook (polled on the turn's task). The model is
//! a closure answering at once, so the turn's own cost is what is measured.

use std::convert::Infallible;
use std::future::ready;

use benchmarks::{alternate, print_ratios, Contender};
use engine_core::Engine;
use plugin_sdk::engine::linked_hooks;

/// An engine with the bench plugin's hooks named `names` and nothing else.
fn engine(names: &[&str]) -> Engine {
    let hooks = names.iter().map(|name| {
        linked_hooks()
            .find(|hook| hook.name == *name)
            .expect("the bench hook is linked")
    });
    Engine::builder()
        .tools([])
        .hooks(hooks)
        .build()
        .expect("the bench hooks are valid")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let turn_with = |engine: Engine| {
        let turn = engine
            .turn("default")
            .expect("the default agent")
            .in_conversation("subscriber", "bench");
        let runtime = &runtime;
        move || {
            let outcome = runtime
                .block_on(engine.run_turn(&turn, "hello", false, |_| {
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
                run: Box::new(turn_with(engine(&[]))),
            },
            Contender {
                name: "turn with one async hook",
                run: Box::new(turn_with(engine(&["observe_async"]))),
            },
            Contender {
                name: "turn with one plain-fn hook",
                run: Box::new(turn_with(engine(&["observe_sync"]))),
            },
        ],
        41,
        2_000,
    );
    print_ratios("a turn through the hook pipeline", &medians);
}
