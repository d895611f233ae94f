"""The process's MCP servers, and what an agent selects of their tools."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentd.runtime.lazy import lazy
from agentd.runtime.mcp_tools.names import offered_names
from agentd.runtime.tools import Tool, ToolContext

if TYPE_CHECKING:
    from mcp.types import Tool as McpTool

    from agentd.runtime.mcp_tools import connection, results
    from agentd.runtime.mcp_tools.connection import Backoff, McpConnection
    from agentd.runtime.mcp_tools.spec import McpServerSpec, McpToolRef
else:
    # The mcp SDK (its server side and cryptography come with any import of it)
    # loads only for a server with [[mcp_servers]]: start-up cost, see lazy.py.
    connection = lazy("agentd.runtime.mcp_tools.connection")
    results = lazy("agentd.runtime.mcp_tools.results")

__all__ = ["McpServers", "McpToolSelection", "mcp_source"]

log = logging.getLogger("agentd.mcp")

#: How long `open` waits for the servers' first connections before serving anyway.
OPEN_WAIT = 10.0


def mcp_source(server_id: str) -> str:
    """A tool's `source` when it is this MCP server's."""
    return f"mcp:{server_id}"


class McpServers:
    """Every `[[mcp_servers]]` entry's connection, shared by all runs of the
    process: opened with the Host, closed after its runs drained."""

    def __init__(self, specs: Sequence[McpServerSpec] = (), *, backoff: Backoff | None = None, **pings: float) -> None:
        """`pings`: McpConnection's `ping_interval` and `ping_timeout`."""
        self.connections: dict[str, McpConnection] = {}
        for spec in specs:
            if spec.id in self.connections:
                raise ValueError(f"MCP server {spec.id!r} is defined twice")
            self.connections[spec.id] = connection.McpConnection(spec, backoff, **pings)
        #: Per server: the listing its tools were made from, and those tools by
        #: listed name (rebuilt when the listing changes).
        self._made: dict[str, tuple[list[McpTool], list[tuple[str, Tool]]]] = {}

    def __len__(self) -> int:
        return len(self.connections)

    @property
    def ids(self) -> set[str]:
        return set(self.connections)

    def select(self, refs: Sequence[McpToolRef]) -> McpToolSelection:
        """The tool source an agent with `tools = ...` gets."""
        return McpToolSelection(self, tuple(refs))

    async def open(self, wait: float = OPEN_WAIT) -> None:
        await asyncio.gather(*(c.open(wait) for c in self.connections.values()))

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.connections.values()))

    def named_tools(self, server_id: str) -> list[tuple[str, Tool]]:
        """The server's tools, each with the name the server lists it under (a
        Tool's own name is the one models see: names.py); the same Tools while
        the listing is unchanged."""
        connection = self.connections[server_id]
        listing = connection.tools
        made = self._made.get(server_id)
        if made is not None and made[0] is listing:
            return made[1]
        before = {listed: tool.name for listed, tool in made[1]} if made is not None else {}
        names = offered_names(tool.name for tool in listing)
        tools = [(listed.name, _as_tool(connection, listed, names[listed.name])) for listed in listing]
        self._made[server_id] = (listing, tools)
        for listed, offered in names.items():
            if offered != listed and before.get(listed) != offered:
                log.warning(
                    "MCP server %r lists a tool %r that not every model provider accepts by name"
                    " (letters, digits, '_' and '-', up to 64): models see it as %r",
                    server_id,
                    listed,
                    offered,
                )
        return tools


class McpToolSelection:
    """An agent's MCP tools: those of the configured servers its `tools` refs
    match, read again at each run (a server's listing may change). On a name
    two servers share, the first ref (then the first server) wins."""

    def __init__(self, servers: McpServers, refs: tuple[McpToolRef, ...]) -> None:
        self.servers = servers
        self.refs = refs

    def tools(self) -> list[Tool]:
        picked: dict[str, Tool] = {}
        for ref in self.refs:
            for server_id in [ref.server] if ref.server is not None else list(self.servers.connections):
                for listed, tool in self.servers.named_tools(server_id):
                    matched = ref.matches(server_id, listed) or ref.matches(server_id, tool.name)
                    if matched and tool.name not in picked:
                        picked[tool.name] = tool
        return list(picked.values())


def _as_tool(server: McpConnection, listed: McpTool, offered: str) -> Tool:
    """One MCP tool as an agentd Tool named `offered`; its input schema reaches the
    model unchanged, its `[mcp_servers.tools.<listed name>]` settings apply, and
    calls reach the server under the name it listed."""
    name = listed.name
    settings = server.spec.settings_for(name)

    async def execute(args: Any, _context: ToolContext) -> Any:
        return results.tool_output(await server.call(name, args))

    return Tool(
        name=offered,
        description=listed.description or listed.title or name,
        execute=execute,
        input_schema=dict(listed.input_schema),
        source=mcp_source(server.spec.id),
        background=settings.background,
    )
