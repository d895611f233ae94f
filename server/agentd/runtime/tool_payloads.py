"""Tool payload transforms (the seed's `hooks.transform`, a
ToolPayloadTransformPolicy): what callers and subscribers are shown of a
tool's arguments and result, while the model keeps the real payload.

A transform is worked out once, where the part is made (the tool call as the
model streams it, the result once the tool and `process_tool_result` are
done, a background result when it is reconciled), and kept on the part as its
`display`: `{"args": ..., "result": ...}`, a key only for what was
transformed. The part carries it into the chunk log and the stored message,
and the transport's one converter of tool parts shows the display in place of
the payload, so every outward path (Stream, Subscribe and Connect chunks,
Generate, ListMessages) takes it from one place. Nothing is transformed for a
client tool: its caller runs it and needs the real arguments.

Rules, per payload (arguments or result), applied in this order:
`function(ctx)` (Python only) replaces the payload with what it returns;
`replace` shows a fixed value; `redact` shows the listed keys' values, at any
depth, as "[REDACTED]"; `truncate` cuts longer strings to that many
characters, at any depth.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentd.runtime.messages import JSON, ToolCallPart, ToolResultPart
from agentd.runtime.unset import UNSET, Unset

__all__ = [
    "REDACTED",
    "PayloadRule",
    "ToolPayloadContext",
    "ToolPayloadTransform",
    "ToolPayloadTransformPolicy",
    "show_call",
    "show_result",
]

REDACTED = "[REDACTED]"
Phase = Literal["args", "result"]


@dataclass(frozen=True)
class ToolPayloadContext:
    """What a rule's `function` receives."""

    tool_name: str
    tool_call_id: str
    phase: Phase
    value: JSON
    is_error: bool = False


@dataclass(frozen=True)
class PayloadRule:
    """How one payload is shown."""

    #: Keys (at any depth) whose values are shown as "[REDACTED]".
    redact: Sequence[str] = ()
    #: Strings (at any depth) longer than this are cut to it, with a marker.
    truncate: int | None = None
    #: The whole payload shown as this value.
    replace: JSON | Unset = UNSET
    #: `function(ctx) -> shown value` (applied first).
    function: Callable[[ToolPayloadContext], JSON] | None = None

    def __post_init__(self) -> None:
        if self.truncate is not None and (isinstance(self.truncate, bool) or self.truncate < 0):
            raise ValueError("truncate must be a whole number of characters, not negative")
        if isinstance(self.redact, str):
            raise ValueError("redact must be a list of keys")

    def apply(self, ctx: ToolPayloadContext) -> JSON:
        value = ctx.value
        if self.function is not None:
            value = self.function(ctx)
        if not isinstance(self.replace, Unset):
            value = self.replace
        keys = frozenset(self.redact)
        return _walk(value, keys, self.truncate)


@dataclass(frozen=True)
class ToolPayloadTransform:
    """One tool's rules: for its arguments and for its result."""

    args: PayloadRule | None = None
    result: PayloadRule | None = None


@dataclass(frozen=True)
class ToolPayloadTransformPolicy:
    """An agent's rules: `default` for every tool, `tools` by tool name. A tool's
    own `transform` comes first, then `tools[name]`, then `default`, for each
    payload separately."""

    default: ToolPayloadTransform | None = None
    tools: Mapping[str, ToolPayloadTransform] = field(default_factory=dict)

    def for_tool(self, name: str, own: ToolPayloadTransform | None) -> ToolPayloadTransform | None:
        return resolve(self, name, own)


def resolve(
    policy: ToolPayloadTransformPolicy | None, name: str, own: ToolPayloadTransform | None
) -> ToolPayloadTransform | None:
    """The rules that apply to tool `name` (None: it is shown as it is)."""
    layers = [t for t in (own, policy.tools.get(name) if policy else None, policy.default if policy else None) if t]
    if not layers:
        return None
    args = next((t.args for t in layers if t.args is not None), None)
    result = next((t.result for t in layers if t.result is not None), None)
    return None if args is None and result is None else ToolPayloadTransform(args, result)


def show_call(part: ToolCallPart, transform: ToolPayloadTransform | None) -> None:
    """Records what callers are shown of a tool call's arguments."""
    if transform is None or transform.args is None or part.client_tool:
        return
    ctx = ToolPayloadContext(part.tool_name, part.tool_call_id, "args", part.args)
    part.display = {**(part.display or {}), "args": transform.args.apply(ctx)}


def show_result(part: ToolResultPart, transform: ToolPayloadTransform | None) -> None:
    """Records what callers are shown of a tool result (and the arguments it repeats)."""
    if transform is None:
        return
    shown: dict[str, JSON] = {}
    if transform.args is not None:
        shown["args"] = transform.args.apply(ToolPayloadContext(part.tool_name, part.tool_call_id, "args", part.args))
    if transform.result is not None:
        ctx = ToolPayloadContext(part.tool_name, part.tool_call_id, "result", part.result, part.is_error)
        shown["result"] = transform.result.apply(ctx)
    part.display = shown or None


def _walk(value: Any, redact: frozenset[str], truncate: int | None) -> JSON:
    if isinstance(value, Mapping):
        return {k: REDACTED if k in redact else _walk(v, redact, truncate) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_walk(v, redact, truncate) for v in value]
    if isinstance(value, str) and truncate is not None and len(value) > truncate:
        return f"{value[:truncate]}…[{len(value) - truncate} more characters]"
    return value


def rule_from_options(options: Mapping[str, Any], where: str) -> PayloadRule:
    """A rule as agentd.toml writes it: `{ redact = [...], truncate = 80, replace = ... }`
    (ValueError naming `where` and the key for anything else)."""
    unknown = sorted(set(options) - {"redact", "truncate", "replace"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: redact, replace, truncate)")
    redact = options.get("redact", [])
    if not isinstance(redact, list) or not all(isinstance(k, str) and k for k in redact):
        raise ValueError(f"{where}.redact: must be a list of key names")
    truncate = options.get("truncate")
    if truncate is not None and (isinstance(truncate, bool) or not isinstance(truncate, int) or truncate < 0):
        raise ValueError(f"{where}.truncate: must be a whole number of characters, not negative")
    return PayloadRule(tuple(redact), truncate, options["replace"] if "replace" in options else UNSET)


def transform_from_options(options: Mapping[str, Any], where: str) -> ToolPayloadTransform:
    """`{ args = {...}, result = {...} }`."""
    unknown = sorted(set(options) - {"args", "result"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: args, result)")
    rules: dict[str, PayloadRule] = {}
    for key in ("args", "result"):
        if key in options:
            if not isinstance(options[key], Mapping):
                raise ValueError(f"{where}.{key}: must be a table")
            rules[key] = rule_from_options(options[key], f"{where}.{key}")
    return ToolPayloadTransform(rules.get("args"), rules.get("result"))


def policy_from_options(options: Mapping[str, Any], where: str) -> ToolPayloadTransformPolicy:
    """`tool_transform = { args = {...}, result = {...}, tools = { name = { args = {...} } } }`:
    the top-level rules are the agent's default, `tools` the per-tool ones."""
    if not isinstance(options, Mapping):
        raise ValueError(f"{where}: must be a table")
    unknown = sorted(set(options) - {"args", "result", "tools"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: args, result, tools)")
    own = {k: v for k, v in options.items() if k != "tools"}
    tools = options.get("tools", {})
    if not isinstance(tools, Mapping):
        raise ValueError(f"{where}.tools: must be a table of tool names")
    per_tool = {}
    for name, table in tools.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"{where}.tools.{name}: must be a table")
        per_tool[name] = transform_from_options(table, f"{where}.tools.{name}")
    default = transform_from_options(own, where) if own else None
    return ToolPayloadTransformPolicy(default, per_tool)
