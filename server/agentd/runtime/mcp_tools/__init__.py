"""MCP servers as tool sources: `[[mcp_servers]]` connections, shared by the
process's runs, and the tools each agent selects of them."""

from agentd.runtime.mcp_tools.connection import Backoff, McpConnection
from agentd.runtime.mcp_tools.results import McpToolError, tool_output
from agentd.runtime.mcp_tools.servers import McpServers, McpToolSelection, mcp_source
from agentd.runtime.mcp_tools.spec import McpServerSpec, McpToolRef, McpToolSettings, parse_server, parse_tool_refs

__all__ = [
    "Backoff",
    "McpConnection",
    "McpServerSpec",
    "McpServers",
    "McpToolError",
    "McpToolRef",
    "McpToolSelection",
    "McpToolSettings",
    "mcp_source",
    "parse_server",
    "parse_tool_refs",
    "tool_output",
]
