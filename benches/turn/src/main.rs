//! The turn benchmark: a streamed agent turn, ours against a hand-written floor and rig.
//!
//! Brought in from the team's rig-loop anchor (`../shared/anchors/rig-loop`, where rig
//! measured 7.8x the floor's client CPU), with the engine's contenders added, so that a
//! clone of this repository reruns the figure with one command: `bash scripts/bench-turn`.
//!
//! Contenders (one "turn" = user prompt → 3 parallel tool calls → 3 results →
//! final text, two HTTP exchanges with the fake server):
//!   floor        hand-written loop, streamed (SSE)           [src/floor.rs]
//!   rig          rig-agent `prompt(..).stream()`              [src/rig_contender.rs]
//!   floor-unary  hand-written loop, non-streamed JSON
//!   rig-unary    rig-agent `prompt(..).await` (non-streamed)
//!   engine       plugin-sdk's engine, `Engine::converse`, streamed  [benches/turn-contender]
//!   engine-unary the same, non-streamed
//!
//! The harness runs the contenders interleaved: each round, every contender
//! runs a block of N turns (the order rotates each round); per-turn figures of
//! a block = block wall time (and client CPU time) / N; reported figures are
//! medians over rounds, and ratios are medians of the per-round ratios. All
//! contenders share one client tokio runtime (current-thread by default) and
//! one fake server, which runs on its own thread and current-thread runtime.
//!
//! Afterwards each contender runs alone in a fresh child process of this
//! binary (`--child NAME`) to read its peak RSS (VmHWM) and count client-side
//! allocations per turn.
//!
//!   bash scripts/bench-turn [--rounds 21] [--turns 100] [--warmup 100]
//!                      [--rt current|multi] [--contenders floor,rig,...]
//!                      [--child-turns 300] [--no-children] [--out DIR]
//!   bash scripts/bench-turn --check [--out DIR]   # one turn each; DIR gets the requests

mod alloc;
mod floor;
mod rig_contender;
mod server;
mod tool;

use std::time::{Duration, Instant};

use floor::Floor;
use rig_contender::RigContender;
use server::FakeServer;
use turn_contender::EngineContender;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Floor,
    Rig,
    FloorUnary,
    RigUnary,
    Engine,
    EngineUnary,
}

impl Kind {
    const ALL: [Kind; 6] = [
        Kind::Floor,
        Kind::Rig,
        Kind::FloorUnary,
        Kind::RigUnary,
        Kind::Engine,
        Kind::EngineUnary,
    ];
    fn name(self) -> &'static str {
        match self {
            Kind::Floor => "floor",
            Kind::Rig => "rig",
            Kind::FloorUnary => "floor-unary",
            Kind::RigUnary => "rig-unary",
            Kind::Engine => "engine",
            Kind::EngineUnary => "engine-unary",
        }
    }
    fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }
    /// The floor each contender is compared with.
    fn floor(self) -> Kind {
        match self {
            Kind::Floor | Kind::Rig | Kind::Engine => Kind::Floor,
            Kind::FloorUnary | Kind::RigUnary | Kind::EngineUnary => Kind::FloorUnary,
        }
    }
    fn streamed(self) -> bool {
        matches!(self, Kind::Floor | Kind::Rig | Kind::Engine)
    }
}

struct Contenders {
    floor: Floor,
    rig: RigContender,
    engine: EngineContender,
    engine_unary: EngineContender,
}

fn engine_contender(base: &str, stream: bool) -> EngineContender {
    EngineContender::new(base, tool::PREAMBLE, tool::MODEL, stream)
}

impl Contenders {
    /// One turn; returns the final text.
    async fn turn(&self, k: Kind) -> Result<String, Error> {
        Ok(match k {
            Kind::Floor => self.floor.turn(true).await?.text,
            Kind::FloorUnary => self.floor.turn(false).await?.text,
            Kind::Rig => self.rig.turn_streamed().await?.text,
            Kind::RigUnary => self.rig.turn_unary().await?.text,
            Kind::Engine => self.engine.turn(tool::PROMPT).await?,
            Kind::EngineUnary => self.engine_unary.turn(tool::PROMPT).await?,
        })
    }

    async fn block(&self, k: Kind, n: usize) -> Result<Duration, Error> {
        let t0 = Instant::now();
        for _ in 0..n {
            let text = self.turn(k).await?;
            if text != "Done." {
                return Err(format!("{}: unexpected final text {text:?}", k.name()).into());
            }
        }
        Ok(t0.elapsed())
    }
}

#[derive(Clone)]
struct Opts {
    rounds: usize,
    turns: usize,
    warmup: usize,
    rt: String,
    contenders: Vec<Kind>,
    child_turns: usize,
    children: bool,
    out: Option<String>,
    check: bool,
    child: Option<String>,
}

fn parse_opts() -> Result<Opts, Error> {
    let mut o = Opts {
        rounds: 21,
        turns: 100,
        warmup: 100,
        rt: "current".into(),
        contenders: Kind::ALL.to_vec(),
        child_turns: 300,
        children: true,
        out: None,
        check: false,
        child: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--rounds" => o.rounds = val()?.parse()?,
            "--turns" => o.turns = val()?.parse()?,
            "--warmup" => o.warmup = val()?.parse()?,
            "--rt" => o.rt = val()?,
            "--contenders" => {
                o.contenders = val()?
                    .split(',')
                    .map(|s| Kind::parse(s).ok_or_else(|| format!("unknown contender {s}")))
                    .collect::<Result<_, _>>()?
            }
            "--child-turns" => o.child_turns = val()?.parse()?,
            "--no-children" => o.children = false,
            "--out" => o.out = Some(val()?),
            "--check" => o.check = true,
            "--child" => o.child = Some(val()?),
            "-h" | "--help" => {
                println!(
                    "{}",
                    include_str!("main.rs")
                        .lines()
                        .take(30)
                        .collect::<Vec<_>>()
                        .join("\n")
                );
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {a}").into()),
        }
    }
    if o.rt != "current" && o.rt != "multi" {
        return Err("--rt must be current or multi".into());
    }
    Ok(o)
}

fn runtime(rt: &str) -> tokio::runtime::Runtime {
    match rt {
        "multi" => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
        _ => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
    }
}

fn main() {
    // The engine's TLS provider, before any client is built: the floor's and rig's
    // reqwest is the engine's build (rustls without a provider of its own).
    turn_contender::prepare();
    let opts = match parse_opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let result = if let Some(name) = opts.child.clone() {
        child_main(&opts, &name)
    } else if opts.check {
        check_main(&opts)
    } else {
        bench_main(&opts)
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------- --check

fn check_main(opts: &Opts) -> Result<(), Error> {
    let server = FakeServer::start();
    server
        .stats
        .capture
        .store(true, std::sync::atomic::Ordering::Relaxed);
    let base = server.base_url();
    println!("fake server: {base}/chat/completions");
    let rt = runtime(&opts.rt);
    rt.block_on(async {
        let floor = Floor::new(&base);
        let rig = RigContender::new(&base);
        let f = floor.turn(true).await?;
        println!("floor       (SSE):  text={:?} usage={:?}\n  tool results: {:?}", f.text, f.usage, f.tool_results);
        let f = floor.turn(false).await?;
        println!("floor-unary (JSON): text={:?} usage={:?}", f.text, f.usage);
        let r = rig.turn_streamed().await?;
        println!(
            "rig         (SSE):  text={:?} requests={} usage(in/out)={:?}/{:?}\n  tool results seen on the stream: {}",
            r.text, r.requests, r.usage.input_tokens, r.usage.output_tokens, r.tool_results
        );
        let r = rig.turn_unary().await?;
        println!(
            "rig-unary   (JSON): text={:?} requests={} usage(in/out)={:?}/{:?}",
            r.text, r.requests, r.usage.input_tokens, r.usage.output_tokens
        );
        Ok::<_, Error>(())
    })?;
    let s = server.stats.snapshot();
    println!(
        "server: tool-call streams={} text streams={} tool-call JSON={} text JSON={} rejected={} request bytes={}",
        s[0], s[1], s[2], s[3], s[4], s[5]
    );
    if s[..4] != [2, 2, 2, 2] || s[4] != 0 {
        return Err("server saw an unexpected set of requests".into());
    }
    let captured = server.stats.captured.lock().unwrap().clone();
    let labels = [
        "floor-1",
        "floor-2",
        "floor-unary-1",
        "floor-unary-2",
        "rig-1",
        "rig-2",
        "rig-unary-1",
        "rig-unary-2",
    ];
    println!("request body bytes (1 = prompt, 2 = with tool results):");
    for (label, (_, body)) in labels.iter().zip(&captured) {
        println!("  {label:<14} {:>5}", body.len());
    }
    if let Some(dir) = &opts.out {
        std::fs::create_dir_all(dir)?;
        for (label, (headers, body)) in labels.iter().zip(&captured) {
            let pretty = serde_json::from_slice::<serde_json::Value>(body)
                .map(|v| serde_json::to_string_pretty(&v).unwrap())
                .unwrap_or_else(|_| String::from_utf8_lossy(body).into_owned());
            std::fs::write(
                format!("{dir}/{label}.txt"),
                format!("{headers}\n\n{pretty}\n"),
            )?;
        }
        let (tools, text) = server::canned_sse_text();
        std::fs::write(format!("{dir}/response-tool-calls.sse"), tools)?;
        std::fs::write(format!("{dir}/response-text.sse"), text)?;
        println!("wrote the captured requests and the canned SSE responses to {dir}/");
    }
    println!("check OK");
    Ok(())
}

// ---------------------------------------------------------------- benchmark

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pos = q * (s.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
}

fn cpu_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: plain syscall wrapper writing into a local timespec.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Per-turn figures of one block, in microseconds.
#[derive(Clone, Copy, Default)]
struct Sample {
    /// Wall time of the block / turns.
    wall: f64,
    /// Process CPU time minus the fake server thread's CPU time / turns: the
    /// client side (the contender's loop, reqwest/hyper, the client runtime).
    client_cpu: f64,
    /// The fake server thread's CPU time / turns.
    server_cpu: f64,
}

struct Summary {
    med: f64,
    p25: f64,
    p75: f64,
    min: f64,
}

fn summarize(v: &[f64]) -> Summary {
    Summary {
        med: median(&mut v.to_vec()),
        p25: quantile(v, 0.25),
        p75: quantile(v, 0.75),
        min: v.iter().cloned().fold(f64::INFINITY, f64::min),
    }
}

/// (median, min, max) of the per-round ratios a[r] / b[r].
fn ratio(a: &[f64], b: &[f64]) -> (f64, f64, f64) {
    let mut rs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    let lo = rs.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = rs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    (median(&mut rs), lo, hi)
}

fn bench_main(opts: &Opts) -> Result<(), Error> {
    let mut report = String::new();
    macro_rules! say {
        () => {{ println!(); report.push('\n'); }};
        ($($t:tt)*) => {{ let line = format!($($t)*); println!("{line}"); report.push_str(&line); report.push('\n'); }};
    }
    let kinds = opts.contenders.clone();
    let server = FakeServer::start();
    let base = server.base_url();
    let server_clock = server.cpu_clock;
    let rt = runtime(&opts.rt);
    say!(
        "turn bench: rounds={} turns/block={} warmup={} turns/contender, client runtime={}, contenders={}",
        opts.rounds,
        opts.turns,
        opts.warmup,
        if opts.rt == "multi" {
            "tokio multi-thread (2 workers = cores; the loop runs in a spawned task)"
        } else {
            "tokio current-thread (the loop runs in block_on)"
        },
        kinds.iter().map(|k| k.name()).collect::<Vec<_>>().join(",")
    );
    say!("fake server: {base}/chat/completions (own thread, tokio current-thread)");

    // samples[kind index][round]
    let t_start = Instant::now();
    let bench = {
        let (kinds, opts, base) = (kinds.clone(), opts.clone(), base.clone());
        async move {
            let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); kinds.len()];
            let c = Contenders {
                floor: Floor::new(&base),
                rig: RigContender::new(&base),
                engine: engine_contender(&base, true),
                engine_unary: engine_contender(&base, false),
            };
            for &k in &kinds {
                c.block(k, opts.warmup).await?;
            }
            for round in 0..opts.rounds {
                for j in 0..kinds.len() {
                    let i = (round + j) % kinds.len();
                    let (p0, s0) = (cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID), cpu_ns(server_clock));
                    let d = c.block(kinds[i], opts.turns).await?;
                    let (p1, s1) = (cpu_ns(libc::CLOCK_PROCESS_CPUTIME_ID), cpu_ns(server_clock));
                    let n = opts.turns as f64;
                    samples[i].push(Sample {
                        wall: d.as_secs_f64() * 1e6 / n,
                        client_cpu: ((p1 - p0) as f64 - (s1 - s0) as f64) / 1e3 / n,
                        server_cpu: (s1 - s0) as f64 / 1e3 / n,
                    });
                }
            }
            Ok::<_, Error>(samples)
        }
    };
    // current-thread: the loop runs in block_on on this thread, with the
    // reqwest/hyper connection tasks on the same thread. multi-thread: the loop
    // runs as a spawned task on a worker, as a request handler would.
    let samples = if opts.rt == "multi" {
        rt.block_on(rt.spawn(bench))??
    } else {
        rt.block_on(bench)?
    };
    let elapsed = t_start.elapsed();
    drop(rt);
    let stats = server.stats.snapshot();
    drop(server);

    // Every turn is exactly one tool-call exchange and one text exchange.
    let total = |pred: fn(Kind) -> bool| -> u64 {
        kinds
            .iter()
            .filter(|k| pred(**k))
            .map(|_| (opts.warmup + opts.rounds * opts.turns) as u64)
            .sum()
    };
    let (n_stream, n_unary) = (total(|k| k.streamed()), total(|k| !k.streamed()));
    if stats[0] != n_stream
        || stats[1] != n_stream
        || stats[2] != n_unary
        || stats[3] != n_unary
        || stats[4] != 0
    {
        return Err(format!(
            "server request counts {stats:?} do not match {n_stream} streamed / {n_unary} unary turns"
        )
        .into());
    }
    say!(
        "server verified: {} streamed + {} non-streamed turns, 2 requests each, 0 rejected ({:.1} s)",
        n_stream,
        n_unary,
        elapsed.as_secs_f64()
    );

    let col = |i: usize, f: fn(&Sample) -> f64| -> Vec<f64> { samples[i].iter().map(f).collect() };
    let idx = |k: Kind| kinds.iter().position(|x| *x == k);

    say!();
    say!(
        "Wall time per turn (µs; median over {} rounds of {} turns):",
        opts.rounds,
        opts.turns
    );
    say!(
        "| contender | median | p25 | p75 | min | ratio vs its floor (median of per-round ratios) | ratio range | difference vs its floor (median) |"
    );
    say!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for (i, k) in kinds.iter().enumerate() {
        let w = col(i, |s| s.wall);
        let sm = summarize(&w);
        let (rs, rr, dd) = match idx(k.floor()).filter(|&fi| fi != i) {
            Some(fi) => {
                let fw = col(fi, |s| s.wall);
                let (m, lo, hi) = ratio(&w, &fw);
                let mut d: Vec<f64> = w.iter().zip(&fw).map(|(a, b)| a - b).collect();
                (
                    format!("**{m:.2}×** vs {}", k.floor().name()),
                    format!("{lo:.2}–{hi:.2}"),
                    format!("+{:.0} µs", median(&mut d)),
                )
            }
            None => ("—".into(), "—".into(), "—".into()),
        };
        say!(
            "| {} | **{:.1}** | {:.1} | {:.1} | {:.1} | {rs} | {rr} | {dd} |",
            k.name(),
            sm.med,
            sm.p25,
            sm.p75,
            sm.min
        );
    }
    say!();
    say!("CPU time per turn (µs; client = process CPU minus the fake server thread's CPU):");
    say!(
        "| contender | client CPU median | p25 | p75 | ratio vs its floor (median of per-round ratios) | ratio range | server CPU median |"
    );
    say!("|---|---:|---:|---:|---:|---:|---:|");
    for (i, k) in kinds.iter().enumerate() {
        let c = col(i, |s| s.client_cpu);
        let sc = col(i, |s| s.server_cpu);
        let sm = summarize(&c);
        let (rs, rr) = match idx(k.floor()).filter(|&fi| fi != i) {
            Some(fi) => {
                let (m, lo, hi) = ratio(&c, &col(fi, |s| s.client_cpu));
                (
                    format!("**{m:.2}×** vs {}", k.floor().name()),
                    format!("{lo:.2}–{hi:.2}"),
                )
            }
            None => ("—".into(), "—".into()),
        };
        say!(
            "| {} | **{:.1}** | {:.1} | {:.1} | {rs} | {rr} | {:.1} |",
            k.name(),
            sm.med,
            sm.p25,
            sm.p75,
            median(&mut sc.clone())
        );
    }

    let mut lines_tsv = String::from(
        "round\tcontender\twall_us_per_turn\tclient_cpu_us_per_turn\tserver_cpu_us_per_turn\n",
    );
    for r in 0..opts.rounds {
        for (i, k) in kinds.iter().enumerate() {
            let s = samples[i][r];
            lines_tsv.push_str(&format!(
                "{r}\t{}\t{:.3}\t{:.3}\t{:.3}\n",
                k.name(),
                s.wall,
                s.client_cpu,
                s.server_cpu
            ));
        }
    }

    let mut child_lines = Vec::new();
    if opts.children {
        say!();
        say!(
            "Each contender alone in a fresh process ({} timed turns after {} warm-up; same runtime kind; allocations counted on client threads only):",
            opts.child_turns,
            opts.warmup.min(50)
        );
        say!(
            "| process | peak RSS (VmHWM) | allocations/turn | bytes allocated/turn | wall µs/turn (alone, counting on) |"
        );
        say!("|---|---:|---:|---:|---:|");
        let exe = std::env::current_exe()?;
        let mut names = vec!["none".to_string()];
        names.extend(kinds.iter().map(|k| k.name().to_string()));
        for name in names {
            let out = std::process::Command::new(&exe)
                .args([
                    "--child",
                    &name,
                    "--turns",
                    &opts.child_turns.to_string(),
                    "--warmup",
                    &opts.warmup.min(50).to_string(),
                    "--rt",
                    &opts.rt,
                ])
                .output()?;
            if !out.status.success() {
                return Err(format!(
                    "child {name} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            }
            let line = String::from_utf8_lossy(&out.stdout).trim().to_string();
            let f: Vec<&str> = line.split('\t').collect();
            say!(
                "| {} | {} KiB | {} | {} | {} |",
                f[0],
                f[1],
                f[2],
                f[3],
                f[4]
            );
            child_lines.push(line);
        }
        say!(
            "(\"none\" = the same process with the fake server and client runtime up, no contender built, no turns.)"
        );
    }

    if let Some(dir) = &opts.out {
        std::fs::create_dir_all(dir)?;
        std::fs::write(format!("{dir}/rounds.tsv"), lines_tsv)?;
        let mut c =
            String::from("process\tvmhwm_kib\tallocs_per_turn\tbytes_per_turn\twall_us_per_turn\n");
        for l in &child_lines {
            c.push_str(l);
            c.push('\n');
        }
        std::fs::write(format!("{dir}/children.tsv"), c)?;
        let args: Vec<String> = std::env::args().skip(1).collect();
        std::fs::write(
            format!("{dir}/summary.md"),
            format!(
                "command: bash scripts/bench-turn {}\n\n{report}",
                args.join(" ")
            ),
        )?;
        println!("\nwrote {dir}/summary.md, {dir}/rounds.tsv and {dir}/children.tsv");
    }
    Ok(())
}

// ---------------------------------------------------------------- --child

fn vm_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn child_main(opts: &Opts, name: &str) -> Result<(), Error> {
    let server = FakeServer::start();
    let base = server.base_url();
    let rt = runtime(&opts.rt);
    let kind = if name == "none" {
        None
    } else {
        Some(Kind::parse(name).ok_or_else(|| format!("unknown contender {name}"))?)
    };
    let (warmup, turns) = (opts.warmup, opts.turns);
    let base2 = base.clone();
    let measure = async move {
        let base = base2;
        let Some(k) = kind else {
            return Ok((0.0, 0.0, 0.0));
        };
        // Build only what this contender needs.
        let (floor, rig, engine) = match k {
            Kind::Rig | Kind::RigUnary => (None, Some(RigContender::new(&base)), None),
            Kind::Floor | Kind::FloorUnary => (Some(Floor::new(&base)), None, None),
            Kind::Engine | Kind::EngineUnary => {
                (None, None, Some(engine_contender(&base, k == Kind::Engine)))
            }
        };
        let turn = |k: Kind| {
            let (floor, rig, engine) = (&floor, &rig, &engine);
            async move {
                let text = match k {
                    Kind::Floor => floor.as_ref().unwrap().turn(true).await?.text,
                    Kind::FloorUnary => floor.as_ref().unwrap().turn(false).await?.text,
                    Kind::Rig => rig.as_ref().unwrap().turn_streamed().await?.text,
                    Kind::RigUnary => rig.as_ref().unwrap().turn_unary().await?.text,
                    Kind::Engine | Kind::EngineUnary => {
                        engine.as_ref().unwrap().turn(tool::PROMPT).await?
                    }
                };
                if text != "Done." {
                    return Err::<(), Error>(format!("unexpected text {text:?}").into());
                }
                Ok(())
            }
        };
        for _ in 0..warmup {
            turn(k).await?;
        }
        alloc::enable();
        let (a0, b0) = alloc::counts();
        let t0 = Instant::now();
        for _ in 0..turns {
            turn(k).await?;
        }
        let el = t0.elapsed();
        let (a1, b1) = alloc::counts();
        let n = turns as f64;
        Ok::<_, Error>((
            (a1 - a0) as f64 / n,
            (b1 - b0) as f64 / n,
            el.as_secs_f64() * 1e6 / n,
        ))
    };
    // Same placement as the timed run: block_on (current-thread) or a spawned task (multi).
    let (allocs, bytes, us) = if opts.rt == "multi" {
        rt.block_on(rt.spawn(measure))??
    } else {
        rt.block_on(measure)?
    };
    let hwm = vm_hwm_kib();
    drop(rt);
    drop(server);
    if kind.is_none() {
        println!("none\t{hwm}\t—\t—\t—");
    } else {
        println!("{name}\t{hwm}\t{allocs:.0}\t{bytes:.0}\t{us:.1}");
    }
    Ok(())
}
