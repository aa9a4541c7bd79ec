"""A minimal MCP server for tools.d/ (the template mcp-server.json starts it), written
with the official Python MCP SDK: `pip install mcp==2.3.0` (the version the tests pin).
Over stdio; each function below is a tool, its type hints the tool's input schema."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def shout(text: str) -> str:
    """Answers the text in capitals."""
    return text.upper()


if __name__ == "__main__":
    server.run()
