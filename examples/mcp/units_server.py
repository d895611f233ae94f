"""A small MCP server for agentd's README: unit conversions over stdio,
written with the official `mcp` SDK (`python examples/mcp/units_server.py`)."""

from __future__ import annotations

from typing import Literal

from mcp.server.mcpserver import MCPServer

server = MCPServer("units")


@server.tool()
def convert_temperature(value: float, to: Literal["C", "F"]) -> float:
    """Convert a temperature to Celsius (C) or Fahrenheit (F)."""
    return round(value * 9 / 5 + 32, 2) if to == "F" else round((value - 32) * 5 / 9, 2)


@server.tool()
def convert_length(value: float, to: Literal["km", "mi"]) -> float:
    """Convert a length to kilometres (km) or miles (mi)."""
    return round(value * 1.609344, 3) if to == "km" else round(value / 1.609344, 3)


if __name__ == "__main__":
    server.run()
