//! A plugin with a reqwest client of its own, in an image whose reqwest has no crypto
//! provider built in (the workspace's reqwest is `rustls-no-provider`, with ring): the
//! engine installs ring before any plugin code runs, so the plugin's client is built and
//! used as if it had brought its own provider.
//!
//! This test binary links only the tool defined here, and each test runs in a process
//! of its own (nextest), so nothing but the engine installs the provider first.

use engine_core::config::EngineConfig;
use engine_core::{Call, Engine};
use plugin_sdk::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

plugin_sdk::plugin! {
    namespace = "fetcher",
    engine = ">=0.1",
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
struct Page {
    url: String,
}

/// Fetches a page with a client of the plugin's own.
#[define_tool]
async fn fetch(page: Page) -> Result<String, ToolError> {
    // `Client::new` panics when rustls has no provider: the panic is what this test
    // would see without the engine's.
    let response = reqwest::Client::new()
        .get(&page.url)
        .send()
        .await
        .map_err(|error| ToolError::new(error.to_string()))?;
    response
        .text()
        .await
        .map_err(|error| ToolError::new(error.to_string()))
}

/// An HTTP server that answers one request with `body`.
async fn serve_once(body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = vec![0; 4096];
        let _ = stream.read(&mut request).await.unwrap();
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
    });
    format!("http://{address}/")
}

#[tokio::test]
async fn a_plugins_own_reqwest_client_works_in_an_engine_without_a_built_in_provider() {
    assert!(
        rustls::crypto::CryptoProvider::get_default().is_none(),
        "nothing before the engine installs a provider in this process"
    );
    let engine = Engine::builder()
        .backends(engine::default_backends())
        .config(EngineConfig::parse("[agents.fetcher]\n").unwrap())
        .build()
        .expect("the fetcher tool is valid");
    let turn = engine.turn("fetcher").unwrap();
    let url = serve_once("hello from a plugin's client").await;
    let arguments = serde_json::json!({ "url": url }).to_string();
    let output = engine
        .call(&turn, Call::new("fetcher__fetch", &arguments))
        .await
        .expect("the plugin's client is built and reaches the server");
    assert_eq!(output, "\"hello from a plugin's client\"");
}
