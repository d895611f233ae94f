"""Server-side tools: Python callables with a JSON-schema input, and the
sources that supply an agent's tools while it runs (an MCP server's)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentd.runtime.tool_payloads import ToolPayloadTransform, ToolPayloadTransformPolicy, resolve

#: Where a Python tool comes from (`--app`, or code using the runtime).
PYTHON_SOURCE = "python"

ToolFunction = Callable[..., Any] | Callable[..., Awaitable[Any]]


@dataclass(slots=True)
class ToolContext:
    """What a tool sees besides its input."""

    run_id: str
    agent_id: str
    tool_call_id: str
    request_context: dict[str, Any] = field(default_factory=dict)
    thread_id: str | None = None
    resource_id: str | None = None
    #: `await context.writer.custom("data-progress", {...})` streams a data chunk.
    writer: Any = None


@dataclass(slots=True)
class Tool:
    """A tool: `execute(input, context)` may be sync or async."""

    name: str
    description: str
    execute: ToolFunction
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    #: What callers are shown of its arguments and result (the model sees the real ones).
    transform: ToolPayloadTransform | None = None
    #: Runs detached: the call answers at once with a deferred result, and the
    #: real one is reconciled into the thread when the work ends (background.py).
    background: bool = False
    #: Where the tool comes from: "python", or "mcp:<server id>" (shown by ListAgents/GetAgent).
    source: str = PYTHON_SOURCE

    async def call(self, args: Any, context: ToolContext) -> Any:
        takes_context = len(inspect.signature(self.execute).parameters) >= 2
        result = self.execute(args, context) if takes_context else self.execute(args)
        if inspect.isawaitable(result):
            result = await result
        return result


def payload_rules(
    policy: ToolPayloadTransformPolicy | None, name: str, tool: Tool | None
) -> ToolPayloadTransform | None:
    """The payload rules of tool `name` under an agent's `policy` (the tool's own first: tool_payloads.resolve)."""
    return resolve(policy, name, tool.transform if tool is not None else None)


def tool(
    name: str,
    description: str,
    input_schema: dict[str, Any] | None = None,
    *,
    transform: ToolPayloadTransform | None = None,
    background: bool = False,
) -> Callable[[ToolFunction], Tool]:
    """Decorator form: `@tool("search", "Search the web", {...}, background=True)`."""

    def wrap(fn: ToolFunction) -> Tool:
        schema = input_schema or {"type": "object", "properties": {}}
        return Tool(name, description, fn, schema, transform=transform, background=background)

    return wrap


class ToolSource(Protocol):
    """Tools an agent gets from elsewhere (an MCP server), read again for every
    run: the set may change while the process runs."""

    def tools(self) -> list[Tool]:
        """The tools available now."""
        ...
