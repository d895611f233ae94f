"""MCP servers as tool sources: `[[mcp_servers]]` connections, shared by the
process's runs, and the tools each agent selects of them. The connection and
its results (`connection.py`, `results.py`, what imports the mcp SDK) load
when a server is configured."""

from agentd.runtime.mcp_tools.servers import McpServers, McpToolSelection, mcp_source
from agentd.runtime.mcp_tools.spec import McpServerSpec, McpToolRef, McpToolSettings, parse_server, parse_tool_refs

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
