//! Soak: 10,000 calls that answer, fail, panic, time out and are cancelled, concurrently,
//! leave the process as they found it: the same threads, and every byte they allocated
//! freed (counted by this binary's global allocator, so a leak of one small allocation
//! per call is 10,000 allocations, not noise in a resident-set size).
//!
//! This binary holds one test: another test running beside it would allocate and start
//! threads of its own.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Duration;

use engine_core::config::EngineConfig;
use engine_core::{Call, CancellationToken, Engine, Instant, Turn};
use plugin_sdk::prelude::*;

/// The system allocator, counting the bytes live at any moment.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every method forwards to `System` unchanged; the counter is only arithmetic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = System.alloc(layout);
        if !pointer.is_null() {
            LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        System.dealloc(pointer, layout);
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(pointer, layout, new_size);
        if !moved.is_null() {
            LIVE_BYTES.fetch_add(
                new_size as isize - layout.size() as isize,
                Ordering::Relaxed,
            );
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

plugin_sdk::plugin! {
    namespace = "soak",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Order {
    item: String,
    quantity: u32,
}

#[derive(Serialize, JsonSchema)]
struct Placed {
    item: String,
    quantity: u32,
}

/// Places an order.
#[define_tool]
async fn place(order: Order) -> Placed {
    Placed {
        item: order.item,
        quantity: order.quantity,
    }
}

/// Refuses every order.
#[define_tool]
async fn refuse(_order: Order) -> Result<Placed, ToolError> {
    Err(ToolError::new("out of stock"))
}

/// Panics on every order.
#[define_tool]
async fn explode(order: Order) -> Placed {
    panic!("no {} today", order.item)
}

/// Never answers.
#[define_tool]
async fn hang(_order: Order) -> Placed {
    std::future::pending().await
}

/// Answers after a while: long enough to be cancelled first.
#[define_tool]
async fn dawdle(order: Order) -> Placed {
    tokio::time::sleep(Duration::from_secs(5)).await;
    place(order).await
}

const ORDER: &str = r#"{"item": "tea", "quantity": 2}"#;

/// What one call of the mix is, by its index.
fn plan(index: usize) -> (&'static str, Option<Duration>, bool) {
    match index % 5 {
        0 => ("soak__place", None, false),
        1 => ("soak__refuse", None, false),
        2 => ("soak__explode", None, false),
        3 => ("soak__hang", Some(Duration::from_millis(2)), false),
        _ => ("soak__dawdle", None, true),
    }
}

/// Runs `count` calls of the mix, `at_once` at a time, and answers how many ended in each
/// way (`ok` or the error's kind).
async fn run_mix(engine: &Engine, turn: &Turn, count: usize) -> BTreeMap<&'static str, usize> {
    const AT_ONCE: usize = 100;
    let mut outcomes = BTreeMap::new();
    for batch in (0..count).collect::<Vec<_>>().chunks(AT_ONCE) {
        let calls = batch.iter().map(|&index| async move {
            let (tool, timeout, cancel) = plan(index);
            let token = CancellationToken::new();
            let mut call = Call::new(tool, ORDER).cancel_on(&token);
            if let Some(timeout) = timeout {
                call = call.deadline(Instant::now() + timeout);
            }
            let canceller = async {
                if cancel {
                    tokio::task::yield_now().await;
                    token.cancel();
                }
            };
            let (outcome, ()) = tokio::join!(engine.call(turn, call), canceller);
            match outcome {
                Ok(_) => "ok",
                Err(error) => error.kind().as_str(),
            }
        });
        for outcome in futures::future::join_all(calls).await {
            *outcomes.entry(outcome).or_insert(0) += 1;
        }
    }
    outcomes
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux's /proc")
        .count()
}

#[test]
fn ten_thousand_mixed_calls_leave_no_thread_and_no_allocation_behind() {
    // The default panic hook would print each of the tools' 2,200 panics (the engine
    // reports them); it is back for this test's own assertions.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let engine = Engine::builder()
        .config(EngineConfig::parse("[agents.soak]\n").unwrap())
        .build()
        .expect("the soak tools are valid");
    let turn = engine.turn("soak").unwrap();

    // A first round reaches the steady state: the runtime's lazily made parts, the
    // tools' first-use caches, the allocator's arenas.
    runtime.block_on(run_mix(&engine, &turn, 1_000));
    let threads_before = threads();
    let bytes_before = LIVE_BYTES.load(Ordering::Relaxed);

    let outcomes = runtime.block_on(run_mix(&engine, &turn, 10_000));
    std::panic::set_hook(report);

    let expected: BTreeMap<&str, usize> = [
        ("ok", 2_000),
        ("failed", 2_000),
        ("panicked", 2_000),
        ("timed_out", 2_000),
        ("cancelled", 2_000),
    ]
    .into();
    assert_eq!(outcomes, expected, "every call ended the way its tool goes");
    assert_eq!(threads(), threads_before, "threads after 10,000 calls");
    let grown = LIVE_BYTES.load(Ordering::Relaxed) - bytes_before;
    // A few hundred bytes move between the runtime's internal queues and caches (560 on
    // 2026-11-30); one leaked allocation of 8 bytes in one call of five is 16,000.
    assert!(
        grown < 4 * 1024,
        "{grown} more bytes live after 10,000 calls than before"
    );
}
