//! Start-up (validation, the default agent equipped; the catalogs wait for first use) for
//! 10, 100 and 1,000 generated tools, and serving a rendered catalog. The first start-up
//! of a fresh process is `first_startup`, run by `scripts/bench-first-startup`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use benchmarks::{
    alternate, generated_tools, print_ratios, schemas_only, start_engine as start, Contender,
};
use criterion::{criterion_group, BenchmarkId, Criterion};
use engine_core::Format;
use plugin_sdk::engine::ToolDescriptor;
use serde_json::Value;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("startup");
    for count in [10, 100, 1_000] {
        let linked = generated_tools(count);
        assert_eq!(start(&linked).tools().len(), count);
        group.bench_with_input(
            BenchmarkId::new("schemas only", count),
            &linked,
            |b, linked| b.iter(|| schemas_only(linked)),
        );
        group.bench_with_input(
            BenchmarkId::new("engine ready", count),
            &linked,
            |b, linked| b.iter(|| start(linked)),
        );
    }
    group.finish();

    let engine = start(&generated_tools(100));
    let catalog: Value = serde_json::from_slice(&engine.catalog(Format::OpenAi, "en-US")).unwrap();
    let mut group = c.benchmark_group("serve 100-tool catalog");
    group.bench_function("serialize the catalog (baseline)", |b| {
        b.iter(|| serde_json::to_vec(black_box(&catalog)).unwrap())
    });
    group.bench_function("Engine::catalog (rendered)", |b| {
        b.iter(|| engine.catalog(black_box(Format::OpenAi), "en-US"))
    });
    group.bench_function("Engine::catalog MCP it-IT (cached)", |b| {
        b.iter(|| engine.catalog(black_box(Format::Mcp), "it-IT"))
    });
    group.finish();

    for count in [10, 100, 1_000] {
        let linked = generated_tools(count);
        let rounds = if count == 1_000 { 21 } else { 41 };
        let medians = ready_medians(&linked, rounds);
        print_ratios(&format!("start-up, {count} tools"), &medians);
    }
    let medians = alternate(
        &mut [
            Contender {
                name: "serialize the catalog (baseline)",
                run: Box::new(|| drop(black_box(serde_json::to_vec(&catalog).unwrap()))),
            },
            Contender {
                name: "Engine::catalog (rendered)",
                run: Box::new(|| drop(black_box(engine.catalog(Format::OpenAi, "en-US")))),
            },
            Contender {
                name: "Engine::catalog MCP it-IT (cached)",
                run: Box::new(|| drop(black_box(engine.catalog(Format::Mcp, "it-IT")))),
            },
        ],
        41,
        2_000,
    );
    print_ratios("serving the 100-tool catalog", &medians);
}

/// Schemas alone and the whole start-up, taking turns for `rounds` rounds, each timed
/// until the registry is ready (its drop is not timed).
fn ready_medians(
    linked: &[&'static ToolDescriptor],
    rounds: usize,
) -> Vec<(&'static str, Duration)> {
    let (mut schemas, mut ready) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        schemas_only(linked);
        schemas.push(started.elapsed());
        let started = Instant::now();
        let engine = start(linked);
        ready.push(started.elapsed());
        drop(engine);
    }
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    vec![
        ("schemas only (input schemas, one thread)", median(schemas)),
        ("engine ready (catalogs on first use)", median(ready)),
    ]
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
