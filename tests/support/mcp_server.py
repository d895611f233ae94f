"""A real MCP server for the tests, written with the official SDK's server side:
`python tests/support/mcp_server.py` serves stdio; `... --http PORT` serves
streamable HTTP on 127.0.0.1:PORT/mcp.

Its tools: `add` (structured content), `echo` (text), `picture` (an image),
`fail` (an error result), `slow` (sleeps), `crash` (the process exits mid-call),
`grow` (adds a tool and says `list_changed`), `pid`, `whoami` (reads its environment),
`files.read` (a name not every model provider takes). With MCP_TEST_STDERR set it
prints a line naming MCP_TEST_SECRET to stderr as it starts, and `crash` prints its
last words there."""

from __future__ import annotations

import asyncio
import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent

server = MCPServer("agentd-test")

#: A tiny PNG's bytes in base64 (the test compares it verbatim).
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool(structured_output=False)
def picture() -> list[ImageContent | TextContent]:
    """A one-pixel picture and its caption."""
    return [ImageContent(type="image", data=PIXEL, mime_type="image/png"), TextContent(type="text", text="a pixel")]


@server.tool()
def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"failed: {reason}")


@server.tool()
async def slow(seconds: float) -> str:
    """Takes its time."""
    await asyncio.sleep(seconds)
    return "finally"


@server.tool()
def crash() -> str:
    """The server process dies while answering."""
    if os.environ.get("MCP_TEST_STDERR"):
        print("crashing on purpose", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(3)


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Adds a tool called `name` (it answers its own name), then says the list changed."""

    def grown() -> str:
        return f"I am {name}"

    server.add_tool(grown, name=name, description=f"A tool added at run time: {name}")
    await ctx.notify_tools_changed()
    return f"added {name}"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def whoami() -> str:
    """The value of the server's MCP_TEST_SECRET environment variable."""
    return os.environ.get("MCP_TEST_SECRET", "")


@server.tool(name="files.read")
def files_read(path: str) -> str:
    """Answers the path it was asked to read."""
    return f"read {path}"


if __name__ == "__main__":
    if os.environ.get("MCP_TEST_STDERR"):
        print(f"starting with the key {os.environ.get('MCP_TEST_SECRET', '')}", file=sys.stderr, flush=True)
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", port=int(sys.argv[2]))
    else:
        server.run()
