//! The admin panel at scale (issue 34): the tools page of an agent that equips 1,000
//! linked tools, rendered by `engine serve` and fetched over loopback, against the
//! smallest route of the same server (the HTTP floor) and the admin API's JSON of the
//! same view; and a conversation of 1,000 messages, whose page shows the last 100. Each
//! request is timed whole (request, render, transfer), the contenders taking turns;
//! the page's weight is printed beside.

use std::sync::Arc;

use benchmarks::{alternate, generated_tools, print_ratios, Contender};
use engine_core::conversation::Message;
use engine_core::Engine;

/// Stands for the configuration file: the page then carries its switches, as an
/// operator's does. No switch is pressed here.
struct Unchanged;

impl engine_server::Configuration for Unchanged {
    fn edit(
        &self,
        _: &mut dyn FnMut(&str) -> Result<Option<String>, String>,
    ) -> Result<bool, String> {
        Ok(false)
    }

    fn set_secret(&self, _: &str, _: &str, _: Option<&str>) -> Result<(), String> {
        Ok(())
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("bench-panel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let conversations =
        engine_sqlite::open_conversations(&dir.join("conversations.sqlite")).unwrap();
    runtime.block_on(async {
        conversations.claim("long", "default", "ada").await.unwrap();
        let messages: Vec<Message> = (0..1000)
            .map(|n| Message::user(format!("message {n}: {}", "words ".repeat(20))))
            .collect();
        let mut lease = conversations.begin_turn("long").await.unwrap().unwrap();
        conversations
            .append(&mut lease, 0, &messages)
            .await
            .unwrap();
        conversations.end_turn(lease, None).await.unwrap();
    });
    let engine = Arc::new(
        Engine::builder()
            .tools(generated_tools(1_000))
            .hooks([])
            .conversations(conversations)
            .build()
            .unwrap(),
    );
    assert_eq!(engine.agent("default").unwrap().tools().count(), 1_000);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = engine_mcp::McpServer::new(
        Arc::clone(&engine),
        "default",
        engine_mcp::Options::default(),
    )
    .unwrap();
    let options = engine_server::HttpOptions {
        configuration: Some(Arc::new(Unchanged)),
        ..Default::default()
    };
    let shutdown = tokio_util::sync::CancellationToken::new();
    runtime.spawn(engine_server::serve(
        server,
        listener,
        options,
        shutdown.clone(),
    ));

    engine_providers::install_tls_provider();
    let client = reqwest::Client::new();
    let client_runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The page measured is an operator's: a switch for each tool, and the session its
    // first answer started (a browser keeps its cookie; without one, each request would
    // start a session of its own).
    let (page, session) = client_runtime.block_on(async {
        let answer = client
            .get(format!("{base}/agents/default/tools"))
            .header("accept", "text/html")
            .send()
            .await
            .unwrap();
        let cookie = answer.headers()[reqwest::header::SET_COOKIE]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        (answer.text().await.unwrap(), cookie)
    });
    assert_eq!(page.matches("class=\"switch\"").count(), 1_000);
    let fetch = |path: &str, accept: &str| {
        let request = client
            .get(format!("{base}{path}"))
            .header("accept", accept)
            .header("cookie", &session);
        client_runtime.block_on(async {
            let answer = request.send().await.unwrap();
            assert!(answer.status().is_success(), "{path}: {}", answer.status());
            // The session is kept: no request starts another.
            assert!(answer.headers().get(reqwest::header::SET_COOKIE).is_none());
            answer.bytes().await.unwrap().len()
        })
    };
    let routes = [
        ("/v1/extensions", "application/json"),
        ("/v1/admin/agents/default/tools", "application/json"),
        ("/agents/default/tools", "text/html"),
        ("/agents/default/conversations/long", "text/html"),
    ];
    println!("\nweights (machine-independent):");
    for (path, accept) in routes {
        println!("  {path:<40} {:>9} bytes", fetch(path, accept));
    }
    let names = [
        "GET /v1/extensions (HTTP floor)",
        "tools JSON, 1,000 tools (/v1/admin)",
        "tools page, 1,000 tools (HTML)",
        "history page, 1,000 messages (last 100)",
    ];
    let mut contenders: Vec<Contender> = routes
        .iter()
        .zip(names)
        .map(|(&(path, accept), name)| Contender {
            name,
            run: Box::new(move || {
                std::hint::black_box(fetch(path, accept));
            }),
        })
        .collect();
    let medians = alternate(&mut contenders, 31, 5);
    print_ratios("the panel over loopback, 1 server worker", &medians);
    shutdown.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}
