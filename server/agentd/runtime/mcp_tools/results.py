"""An MCP tool call's result as an agentd tool result (JSON)."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent

__all__ = ["McpToolError", "tool_output"]


class McpToolError(Exception):
    """The server answered the call with `isError`, or could not answer it;
    the model sees the message as the tool's error result."""


def tool_output(result: CallToolResult) -> Any:
    """Structured content when the tool gave it (it is what an output schema
    describes); else one text block as its text; else every content block
    (text, images, audio, resources) as the MCP spec spells it. An error result
    raises McpToolError with its text, as a failing Python tool raises."""
    if result.is_error:
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        raise McpToolError(text or "the MCP tool reported an error")
    if result.structured_content is not None:
        return result.structured_content
    if len(result.content) == 1 and isinstance(result.content[0], TextContent):
        return result.content[0].text
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]
