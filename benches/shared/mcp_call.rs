//! One MCP `tools/call` of the benchmark's tool, answered three ways: by engine-mcp's
//! handler, by rmcp's `ToolRouter` with the same tool written for rmcp, and by a
//! hand-written floor. Each takes the arguments as rmcp hands a server (a parsed
//! `JsonObject`) and gives the serialized `CallToolResult`. Shared by the dispatch bench (time) and the mcp-instructions
//! example (instructions), as a module of each.

use std::hint::black_box;
use std::sync::Arc;

use benchmarks::{forecast, Forecast, WeatherQuery, ARGUMENTS};
use engine_core::Engine;
use engine_mcp::{McpServer, Options};
use futures::executor::block_on;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    NumberOrString,
};
use rmcp::service::{serve_directly, RequestContext};
use rmcp::{tool, tool_handler, tool_router, Peer, RoleServer, ServerHandler};
use serde_json::Value;

/// The same tool, written for rmcp.
#[derive(Clone)]
pub struct RmcpServer;

#[tool_router]
impl RmcpServer {
    #[tool(description = "Typical temperatures for a city.")]
    async fn weather(&self, Parameters(query): Parameters<WeatherQuery>) -> Json<Forecast> {
        Json(forecast(query))
    }
}

#[tool_handler]
impl ServerHandler for RmcpServer {}

/// rmcp's router of the tool, as its server builds it.
pub fn rmcp_router() -> ToolRouter<RmcpServer> {
    RmcpServer::tool_router()
}

/// The arguments as rmcp hands them to a server: parsed from text the optimizer cannot
/// see.
fn arguments() -> JsonObject {
    serde_json::from_str(black_box(ARGUMENTS)).unwrap()
}

/// rmcp's router, built once, called as its server calls it: a request context, the
/// result serialized.
pub fn rmcp_call(router: &ToolRouter<RmcpServer>, peer: &Peer<RoleServer>) -> String {
    let params = CallToolRequestParams::new(black_box("weather")).with_arguments(arguments());
    let context = ToolCallContext::new(
        &RmcpServer,
        params,
        RequestContext::new(NumberOrString::Number(1), peer.clone()),
    );
    let CallToolResponse::Complete(result) = block_on(router.call(context)).unwrap() else {
        panic!("the tool completes");
    };
    serde_json::to_string(&result).unwrap()
}

/// The least any server does for the same `tools/call`, written by hand with serde_json
/// alone: the arguments read from the object rmcp hands over, the tool's body, its
/// output as `structuredContent` and as the text of a block, the result serialized. Not
/// a server: what a router, a dispatch or a strict reading adds is measured against it.
pub fn floor_call() -> String {
    let mut params = CallToolRequestParams::new(black_box("weather")).with_arguments(arguments());
    let arguments = params.arguments.take().unwrap_or_default();
    let query: WeatherQuery = serde_json::from_value(Value::Object(arguments)).unwrap();
    let structured = serde_json::to_value(forecast(query)).unwrap();
    let text = serde_json::to_string(&structured).unwrap();
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    serde_json::to_string(&result).unwrap()
}

/// The same `tools/call` through engine-mcp's handler: what our MCP server does for it,
/// serialized as rmcp's contender is.
pub fn engine_mcp_call(server: &McpServer, peer: &Peer<RoleServer>) -> String {
    let params =
        CallToolRequestParams::new(black_box("bench__weather")).with_arguments(arguments());
    let context = RequestContext::new(NumberOrString::Number(1), peer.clone());
    let CallToolResponse::Complete(result) = block_on(server.call_tool(params, context)).unwrap()
    else {
        panic!("the tool completes");
    };
    serde_json::to_string(&result).unwrap()
}

/// engine-mcp's server for the default agent of an engine with the benchmark's tools.
pub fn engine_mcp_server() -> McpServer {
    let engine = Engine::builder()
        .build()
        .expect("the bench plugin is valid");
    McpServer::new(Arc::new(engine), "default", Options::default())
        .expect("an engine has the default agent")
}

/// A peer for rmcp's request contexts: a server on an in-memory pipe, kept for the
/// process's life.
pub fn rmcp_peer(runtime: &tokio::runtime::Runtime) -> Peer<RoleServer> {
    runtime.block_on(async {
        let (server_side, client_side) = tokio::io::duplex(64 * 1024);
        let running = serve_directly::<RoleServer, _, _, _, _>(RmcpServer, server_side, None);
        let peer = running.peer().clone();
        std::mem::forget(running);
        std::mem::forget(client_side);
        peer
    })
}
