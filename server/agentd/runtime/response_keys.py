"""Response-cache keys: how the response cache derives the key of a model call,
and how an agent's entries are found again to invalidate them.

Default key (`build_response_cache_key`)::

    agentd:agent-response:<agentId><scopeTag>:<hash>

    scopeTag = ":" + sha256(utf8(scope)).hexdigest()[:8]   when the scope is non-empty, else ""
    hash     = sha256(utf8(canonical JSON of the payload)).hexdigest()[:32]
    payload  = {"agent": agentId, "step": stepNumber, "scope": scope or "",
                "model": "<provider|unknown>:<modelId|unknown>:<specVersion|unknown>",
                "prompt": canonical prompt}
    canonical JSON = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

The model identity comes from the "provider/model" string of the call (spec
version `MODEL_SPEC_VERSION`). The prompt is the exact provider-bound prompt the
hook sees (after memory and the input processors before this one), each message
as `{"role", "content": [parts], "providerOptions"?}` and each part as a plain
dict (`text`, `reasoning`, `file`, `tool-call` `{toolCallId, toolName, input}`,
`tool-result` `{toolCallId, toolName, output, isError}`, `data-*`). Message ids,
timestamps, thread/resource ids, metadata and data-part ids are left out: they
change per request. Normalisation of values:

* a `providerOptions` object (at any depth) loses its `agentd` sub-key
  (bookkeeping); one left empty is omitted;
* bytes are digested as `"binary:<length>:<sha256 hex>"`; a file URL becomes
  `"url:<href>"`; dates become ISO strings; `None` fields of parts are omitted;
* a float with an integral value is written as an int (`1.0` hashes like `1`),
  because values that arrive through protobuf `Struct`s are always doubles;
  other floats use Python's shortest repr; NaN/infinities become
  `"float:nan"`, `"float:inf"`, `"float:-inf"`.

The key does not cover tool definitions, tool choice, model settings or
provider options of the call, only the prompt and the model, as in the
reference design. ResponseCache is registered after any input processor that
changes the prompt in `process_llm_request`: the key is computed from the prompt
as it reaches the processor.

Invalidation (`invalidate_response_cache`, behind CacheService's
InvalidateResponseCache): `key_prefix(agent_id)` covers every default key of an
agent (all scopes), `key_prefix(agent_id, scope)` the keys of one scope, and
`matches_unscoped(key, agent_id)` picks out the explicitly unscoped ones
(`agentd:agent-response:<agentId>:<32 hex>`). An agent id that itself contains
":<8 hex>" can collide with another agent's scoped prefix; keep agent ids free
of colons when invalidating by prefix. String keys are never covered.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from datetime import date, datetime, time
from typing import Any, Final

from agentd.runtime.cache import ServerCache
from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agentd.runtime.signals import render_for_model
from agentd.runtime.unset import UNSET, Unset

#: Every default-derived key starts with this.
KEY_NAMESPACE: Final = "agentd:agent-response:"
#: The model-interface version that goes into the key's model tag.
MODEL_SPEC_VERSION: Final = "v1"
_HEX32: Final = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True, slots=True)
class ModelIdentity:
    """Which model answers: different models give different responses."""

    provider: str | None = None
    model_id: str | None = None
    spec_version: str | None = MODEL_SPEC_VERSION

    @classmethod
    def from_spec(cls, spec: str) -> ModelIdentity:
        """From a "provider/model" string ("gpt-5" alone has no provider)."""
        provider, sep, model_id = spec.partition("/")
        if not sep:
            return cls(None, spec or None)
        return cls(provider or None, model_id or None)


@dataclass(kw_only=True, slots=True)
class ResponseCacheKeyInputs:
    """What a key function (and `build_response_cache_key`) gets."""

    agent_id: str
    #: The resolved scope; None when unscoped.
    scope: str | None
    model: ModelIdentity
    #: The exact provider-bound prompt (system messages first).
    prompt: list[Message]
    #: 0-based step of the agent loop; tool continuations are > 0.
    step_number: int


KeyFunction = Callable[[ResponseCacheKeyInputs], str | Awaitable[str]]


# ---------------------------------------------------------------- keys


def _sha256(text: str) -> str:
    # surrogatepass: a lone surrogate in a prompt must hash, not fail the lookup.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def scope_tag(scope: str | None) -> str:
    """The scope part of a key: `:` + the first 8 hex of sha256(scope); empty for no (or an empty) scope."""
    return f":{_sha256(scope)[:8]}" if scope else ""


def key_prefix(agent_id: str, scope: str | Unset | None = UNSET) -> str:
    """The prefix of an agent's default-derived keys: of every scope when `scope`
    is not given, of one scope when it is a non-empty string. For no scope
    (None or "") it is the every-scope prefix too: filter those keys with
    `matches_unscoped`."""
    base = f"{KEY_NAMESPACE}{agent_id}"
    if isinstance(scope, str) and scope:
        return f"{base}{scope_tag(scope)}:"
    return f"{base}:"


def matches_unscoped(key: str, agent_id: str) -> bool:
    """True for a default-derived key of `agent_id` written with no scope."""
    prefix = f"{KEY_NAMESPACE}{agent_id}:"
    return key.startswith(prefix) and _HEX32.fullmatch(key, len(prefix)) is not None


def build_response_cache_key(inputs: ResponseCacheKeyInputs) -> str:
    """The default key: `agentd:agent-response:<agentId><scopeTag>:<hash>`."""
    model = inputs.model
    model_tag = ":".join(
        value if isinstance(value, str) and value else "unknown"
        for value in (model.provider, model.model_id, model.spec_version)
    )
    payload = {
        "agent": inputs.agent_id,
        "step": inputs.step_number,
        "scope": inputs.scope or "",
        "model": model_tag,
        "prompt": canonical_prompt(inputs.prompt),
    }
    digest = _sha256(canonical_json(payload))[:32]
    return f"{KEY_NAMESPACE}{inputs.agent_id}{scope_tag(inputs.scope)}:{digest}"


def canonical_json(value: Any) -> str:
    """Sorted keys at every level, no spaces, raw UTF-8 (of an already normalised value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_prompt(prompt: list[Message]) -> list[Any]:
    """The prompt as plain JSON values, without per-request ids and timestamps."""
    return [_strip(_message(m)) for m in prompt]


def _message(message: Message) -> dict[str, Any]:
    content: list[Any] = []
    for part in message.parts:
        content.extend(_parts(part))
    out: dict[str, Any] = {"role": message.role, "content": content}
    if message.provider_options:
        out["providerOptions"] = normalise(message.provider_options)
    return out


def _parts(part: Any) -> list[Any]:
    """One part as plain dicts (a signal renders to the parts the model sees)."""
    if isinstance(part, TextPart):
        return [_part("text", text=part.text, providerOptions=part.provider_options)]
    if isinstance(part, ReasoningPart):
        return [
            _part(
                "reasoning",
                text=part.text,
                signature=part.signature,
                redactedData=part.redacted_data,
                providerOptions=part.provider_options,
            )
        ]
    if isinstance(part, FilePart):
        data = part.data if part.data is not None else (f"url:{part.url}" if part.url is not None else None)
        return [
            _part(
                "file",
                mediaType=part.media_type,
                data=data,
                filename=part.filename,
                providerOptions=part.provider_options,
            )
        ]
    if isinstance(part, ToolCallPart):
        return [_part("tool-call", input=part.args, **_tool(part))]
    if isinstance(part, ToolResultPart):
        return [{**_part("tool-result", **_tool(part)), "output": normalise(part.result), "isError": part.is_error}]
    if isinstance(part, DataPart):
        return [{"type": part.type, "data": normalise(part.data)}]
    if isinstance(part, SignalPart):
        rendered = render_for_model(part.signal)
        return [p for inner in rendered.parts for p in _parts(inner)]
    return [normalise(part)]


def _tool(part: ToolCallPart | ToolResultPart) -> dict[str, Any]:
    """The fields a tool call and its result share (key order is not hashed: keys are sorted)."""
    return {
        "toolCallId": part.tool_call_id,
        "toolName": part.tool_name,
        "providerExecuted": True if part.provider_executed else None,
        "providerOptions": part.provider_metadata,
    }


def _part(type: str, **fields_: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type}
    for name, value in fields_.items():
        if value is None:
            continue
        if name == "providerOptions" and not value:
            continue
        out[name] = normalise(value)
    return out


def normalise(value: Any) -> Any:
    """A JSON value that hashes the same whenever the content is the same (see the module doc)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float:nan"
        if math.isinf(value):
            return "float:inf" if value > 0 else "float:-inf"
        return int(value) if value.is_integer() else value
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return f"binary:{len(data)}:{hashlib.sha256(data).hexdigest()}"
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return normalise(value.value)
    if isinstance(value, Mapping):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((normalise(v) for v in value), key=canonical_json)
    if is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"__type__": type(value).__name__}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is not None:
                out[f.name] = normalise(item)
        return out
    if callable(value):
        return "[function]"
    return f"{type(value).__name__}:{value}"


def _strip(value: Any) -> Any:
    """Removes the `agentd` sub-key of every `providerOptions` object (omitting one left empty)."""
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "providerOptions" and isinstance(item, dict):
            kept = {k: _strip(v) for k, v in item.items() if k != "agentd"}
            if kept:
                out[key] = kept
            continue
        out[key] = _strip(item)
    return out


# ---------------------------------------------------------------- invalidation


async def invalidate_response_cache(
    caches: Iterable[ServerCache], agent_id: str, scope: str | Unset | None = UNSET
) -> int:
    """Deletes `agent_id`'s default-derived entries from every cache in `caches`
    (a response cache may sit on any backend): of every scope when `scope` is
    not given, of one scope when it is a non-empty string, only the explicitly
    unscoped ones for None (or ""). Returns how many were deleted; a backend
    failure raises CacheError."""
    unscoped = scope is None or scope == ""
    deleted = 0
    for cache in caches:
        keys = await cache.keys(key_prefix(agent_id, scope))
        for key in keys:
            if unscoped and not matches_unscoped(key, agent_id):
                continue
            deleted += int(await cache.delete(key))
    return deleted
