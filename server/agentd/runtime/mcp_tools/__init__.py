"""MCP servers as tool sources: `[[mcp_servers]]` connections, shared by the
process's runs, and the tools each agent selects of them. The connection and
its results (`connection.py`, `results.py`, what imports the mcp SDK) load
when a server is configured; the `[[mcp_servers]]` parser (`spec.py`) with the
first server or MCP tool configured."""

from typing import TYPE_CHECKING

from agentd.runtime.lazy import lazy_exports
from agentd.runtime.mcp_tools.servers import McpServers, McpToolSelection, mcp_source

if TYPE_CHECKING:
    from agentd.runtime.mcp_tools.spec import McpServerSpec, McpToolRef, McpToolSettings, parse_server, parse_tool_refs
else:
    # `[[mcp_servers]]` and an agent's MCP tools: read with the first one configured.
    __getattr__ = lazy_exports(
        "agentd.runtime.mcp_tools",
        dict.fromkeys(
            ("McpServerSpec", "McpToolRef", "McpToolSettings", "parse_server", "parse_tool_refs"),
            "agentd.runtime.mcp_tools.spec",
        ),
    )

__all__ = [
    "McpServerSpec",
    "McpServers",
    "McpToolRef",
    "McpToolSelection",
    "McpToolSettings",
    "mcp_source",
    "parse_server",
    "parse_tool_refs",
]
