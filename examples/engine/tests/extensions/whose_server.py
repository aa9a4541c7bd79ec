"""An MCP server (the official Python MCP SDK's `MCPServer`, over stdio) with one tool,
`whose`, which answers the conversation the engine put in the call's `_meta` under
`engine/conversation`, or `none`."""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("whose")


@server.tool()
def whose(ctx: Context) -> str:
    """Answers the conversation the call's `_meta` names, or `none`."""
    meta = ctx.request_context.meta
    if meta is None:
        return "none"
    if hasattr(meta, "model_dump"):
        meta = meta.model_dump(by_alias=True)
    return str(dict(meta).get("engine/conversation", "none"))


if __name__ == "__main__":
    server.run()
