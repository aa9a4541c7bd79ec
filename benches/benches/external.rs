//! External tools against a linked one: a call through each kind (a command tool, an MCP
//! server over stdio) beside `Engine::call` of the linked tool, and the cost of a
//! catalog swap (reading the directory, checking it, swapping it in, and the first
//! catalog rendered after it).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use benchmarks::{alternate, print_ratios, Contender, ARGUMENTS};
use engine_core::config::EngineConfig;
use engine_core::{Call, Engine, Format, Turn};
use engine_extensions::Loader;

/// The schema of the bench's weather tool, for the external copies of it.
const SCHEMA: &str = r#"{"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"type": ["string", "null"]}}, "required": ["city", "days", "units"], "additionalProperties": false}"#;

/// A directory with a configuration and `tools.d/` holding `commands` copies of a
/// command tool (`cat`: it answers its arguments), and the test MCP server when asked.
fn setup(name: &str, commands: usize, mcp: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bench-external-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tools_d = dir.join("tools.d");
    std::fs::create_dir_all(&tools_d).unwrap();
    std::fs::write(dir.join("engine.toml"), "[agents.default]\n").unwrap();
    for index in 0..commands {
        std::fs::write(
            tools_d.join(format!("echo_{index}.json")),
            format!(r#"{{"name": "echo_{index}", "description": "Answers its arguments.", "input_schema": {SCHEMA}, "command": ["cat"]}}"#),
        )
        .unwrap();
    }
    if mcp {
        let server = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/engine/tests/extensions/mcp_server.py");
        std::fs::copy(server, tools_d.join("mcp_server.py")).unwrap();
        std::fs::write(
            tools_d.join("jot.json"),
            format!(
                r#"{{"namespace": "jot", "mcp_server": {{"command": [{:?}, "mcp_server.py"]}}}}"#,
                python().display().to_string()
            ),
        )
        .unwrap();
    }
    dir
}

/// The test venv's Python (`scripts/test` creates it), or `PLUGIN_SDK_PYTHON`.
fn python() -> PathBuf {
    std::env::var_os("PLUGIN_SDK_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"))
}

fn engine_over(dir: &Path) -> (Engine, Loader) {
    let config = EngineConfig::read(Some(&dir.join("engine.toml")), Vec::new()).unwrap();
    let loader = Loader::new(&config).expect("a directory beside the file");
    (Engine::builder().config(config).build().unwrap(), loader)
}

fn call(
    runtime: &tokio::runtime::Runtime,
    engine: &Engine,
    turn: &Turn,
    tool: &str,
    arguments: &str,
) -> String {
    runtime
        .block_on(engine.call(turn, Call::new(black_box(tool), black_box(arguments))))
        .unwrap()
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = setup("calls", 1, python().exists());
    let (engine, loader) = engine_over(&dir);
    engine.install_extensions(runtime.block_on(loader.load(&engine)));
    let turn = engine.turn("default").unwrap();
    assert_eq!(
        call(&runtime, &engine, &turn, "local__echo_0", ARGUMENTS),
        ARGUMENTS
    );
    let mut contenders = vec![
        Contender {
            name: "linked: Engine::call",
            run: Box::new(|| drop(call(&runtime, &engine, &turn, "bench__weather", ARGUMENTS))),
        },
        Contender {
            name: "command tool (`cat`)",
            run: Box::new(|| drop(call(&runtime, &engine, &turn, "local__echo_0", ARGUMENTS))),
        },
    ];
    if python().exists() {
        assert_eq!(
            call(&runtime, &engine, &turn, "jot__echo", r#"{"text": "hi"}"#),
            r#"{"result":"hi"}"#
        );
        contenders.push(Contender {
            name: "MCP server over stdio (Python SDK)",
            run: Box::new(|| {
                drop(call(
                    &runtime,
                    &engine,
                    &turn,
                    "jot__echo",
                    r#"{"text": "hi"}"#,
                ))
            }),
        });
    } else {
        println!("no venv Python: the MCP contender is left out (run scripts/test first)");
    }
    let medians = alternate(&mut contenders, 11, 20);
    print_ratios("a call through each kind of tool", &medians);
    drop(contenders);

    // A swap: the directory read and checked, installed, and the first catalog after it.
    let few = setup("swap-1", 1, false);
    let many = setup("swap-100", 100, false);
    let (few_engine, few_loader) = engine_over(&few);
    let (many_engine, many_loader) = engine_over(&many);
    let swap = |engine: &Engine, loader: &Loader| {
        engine.install_extensions(runtime.block_on(loader.load(engine)));
        let agent = engine.agent("default").unwrap();
        black_box(agent.catalog(Format::OpenAi, "en-US"));
    };
    let medians = alternate(
        &mut [
            Contender {
                name: "no swap: the linked catalog",
                run: Box::new(|| {
                    drop(black_box(
                        engine
                            .agent("default")
                            .unwrap()
                            .catalog(Format::OpenAi, "en-US"),
                    ))
                }),
            },
            Contender {
                name: "swap of 1 command file + catalog",
                run: Box::new(|| swap(&few_engine, &few_loader)),
            },
            Contender {
                name: "swap of 100 command files + catalog",
                run: Box::new(|| swap(&many_engine, &many_loader)),
            },
        ],
        11,
        20,
    );
    print_ratios("a catalog swap", &medians);
    for dir in [dir, few, many] {
        let _ = std::fs::remove_dir_all(dir);
    }
}
