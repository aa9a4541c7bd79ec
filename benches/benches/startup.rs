//! Start-up (registry build, validation, every catalog rendered) for 10, 100 and 1,000
//! generated tools, and serving a rendered catalog.

use std::hint::black_box;
use std::time::{Duration, Instant};

use benchmarks::{alternate, generated_tools, print_ratios, Contender};
use criterion::{criterion_group, BenchmarkId, Criterion};
use engine_core::{Format, Linked, Registry};
use serde_json::Value;

/// Start-up as an engine does it: build and validate, render the model catalogs, and
/// render MCP's for the default locale.
fn start(linked: &Linked) -> Registry {
    let registry = Registry::build(linked.clone()).expect("generated tools are valid");
    black_box(registry.catalog(Format::Mcp, "en-US"));
    registry
}

/// What any SDK that derives schemas must do at least once: build each input schema.
fn schemas_only(linked: &Linked) {
    for tool in &linked.tools {
        black_box((tool.input_schema)());
    }
}

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
            BenchmarkId::new("registry ready", count),
            &linked,
            |b, linked| b.iter(|| start(linked)),
        );
    }
    group.finish();

    let registry = start(&generated_tools(100));
    let catalog: Value =
        serde_json::from_slice(&registry.catalog(Format::OpenAi, "en-US")).unwrap();
    let mut group = c.benchmark_group("serve 100-tool catalog");
    group.bench_function("serialize the catalog (baseline)", |b| {
        b.iter(|| serde_json::to_vec(black_box(&catalog)).unwrap())
    });
    group.bench_function("Registry::catalog (rendered)", |b| {
        b.iter(|| registry.catalog(black_box(Format::OpenAi), "en-US"))
    });
    group.bench_function("Registry::catalog MCP it-IT (cached)", |b| {
        b.iter(|| registry.catalog(black_box(Format::Mcp), "it-IT"))
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
                name: "Registry::catalog (rendered)",
                run: Box::new(|| drop(black_box(registry.catalog(Format::OpenAi, "en-US")))),
            },
            Contender {
                name: "Registry::catalog MCP it-IT (cached)",
                run: Box::new(|| drop(black_box(registry.catalog(Format::Mcp, "it-IT")))),
            },
        ],
        41,
        2_000,
    );
    print_ratios("serving the 100-tool catalog", &medians);

    // The first start of a process, for the 15 ms target: nothing warmed up but the code.
    let linked = generated_tools(1_000);
    let started = Instant::now();
    let registry = start(&linked);
    println!(
        "\nfirst start-up of 1,000 tools in this process: {:.2} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    drop(registry);
}

/// Schemas alone and the whole start-up, taking turns for `rounds` rounds, each timed
/// until the registry is ready (its drop is not timed).
fn ready_medians(linked: &Linked, rounds: usize) -> Vec<(&'static str, Duration)> {
    let (mut schemas, mut ready) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let started = Instant::now();
        schemas_only(linked);
        schemas.push(started.elapsed());
        let started = Instant::now();
        let registry = start(linked);
        ready.push(started.elapsed());
        drop(registry);
    }
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2]
    };
    vec![
        ("schemas only (input schemas, one thread)", median(schemas)),
        ("registry ready (all catalogs)", median(ready)),
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
