//! An MCP `tools/call` of the dispatch benchmark's tool, one contender per process, for
//! counting instructions (as `dispatch_instructions` does for `Engine::call`):
//! `engine-mcp` (engine-mcp's handler), `rmcp` (rmcp's stored `ToolRouter`) and `floor`
//! (by hand, serde_json alone), each from the arguments as rmcp hands a server to the
//! serialized `CallToolResult`.
//!
//! `mcp_instructions MODE [CALLS]`, MODE one of `nothing` (the set-up alone, to
//! subtract), `engine-mcp`, `rmcp` and `floor`.

use std::hint::black_box;

#[path = "../shared/mcp_call.rs"]
mod mcp_call;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "engine-mcp".into());
    let calls: usize = args
        .next()
        .map_or(20_000, |n| n.parse().expect("a number of calls"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let peer = mcp_call::rmcp_peer(&runtime);
    let router = mcp_call::rmcp_router();
    let mcp = mcp_call::engine_mcp_server();
    for _ in 0..calls {
        let output = match mode.as_str() {
            "nothing" => String::new(),
            "engine-mcp" => mcp_call::engine_mcp_call(&mcp, &peer),
            "rmcp" => mcp_call::rmcp_call(&router, &peer),
            "floor" => mcp_call::floor_call(),
            other => panic!("unknown mode `{other}`: nothing, engine-mcp, rmcp or floor"),
        };
        black_box(output);
    }
}
