"""An MCP server for the extension tests, written with the official Python MCP SDK's
`MCPServer` (FastMCP's successor in mcp 2). Over stdio by default; with
`--http TOKEN [PORT]`, over streamable HTTP on PORT (a free one if not given) of
127.0.0.1 (printed first on stdout) at /mcp, refusing any request without
`Authorization: Bearer TOKEN`.

It says on stderr, as it starts, a value the tests configure as a secret (the engine logs
a stdio server's stderr, redacted). Tools: `echo` answers its text; `sleep` waits (a call left hanging); `crash` exits the
process (a server that dies); `grow` adds a tool and says the list changed.
"""

import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("extension-test")


@server.tool()
def echo(text: str) -> str:
    """Answers the text it is given."""
    return text


@server.tool()
async def sleep(seconds: float) -> str:
    """Waits for the given seconds, then answers."""
    await anyio.sleep(seconds)
    return "woke"


@server.tool()
def crash() -> str:
    """Ends the server process at once."""
    os._exit(3)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool called `name`, and tells listening clients that the list changed."""

    def added() -> str:
        return "added"

    server.add_tool(added, name=name, description="A tool added while the server runs.")
    await ctx.notify_tools_changed()
    try:
        # A client on a protocol before 2026-07-28 hears it on the session instead.
        await ctx.session.send_tool_list_changed()
    except Exception:  # not on this protocol: the listen stream carried it
        pass
    return "grown"


def serve_http(token: str, port: int) -> None:
    import socket

    import uvicorn

    app = server.streamable_http_app()
    expected = f"Bearer {token}".encode()

    async def guarded(scope, receive, send):
        if scope["type"] == "http" and dict(scope["headers"]).get(b"authorization") != expected:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"no token"})
            return
        await app(scope, receive, send)

    listener = socket.socket()
    # A server started again on the port of one that died (a restart) may bind at once.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    print(listener.getsockname()[1], flush=True)
    uvicorn.Server(uvicorn.Config(guarded, log_level="warning")).run(sockets=[listener])


if __name__ == "__main__":
    print("starting; the key is hush-hush-key-1234", file=sys.stderr, flush=True)
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--http":
        serve_http(sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 0)
    else:
        server.run()
