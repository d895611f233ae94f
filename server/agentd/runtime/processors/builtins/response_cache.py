"""ResponseCache ("response-cache", beta): replays a stored model response for an identical request.

An input-lane processor at the provider boundary. `process_llm_request` looks
the step up and, on a hit, short-circuits the model with the stored response;
`process_llm_response` records a live response, and the write is committed only
once the whole run has finished with no error and no tripwire (`on_success`),
so a run that a later processor trips, or that fails in a later step, leaves
nothing behind. Each step of a tool loop is cached on its own (the step number
is part of the key). A hit replays the step's tool calls together with their
recorded results: the tools are NOT run again, so do not cache agents whose
tools have side effects. The API may change while the feature is in beta.

There is no agent-level option: register the processor explicitly, e.g.
`Agent(..., input_processors=[ResponseCache(cache, ttl=600)])`. It needs a
`ServerCache` (the server builds it from agentd.toml through
`response_cache_factory`). It calls only `get` and `set` on the backend.

Per-call overrides travel in the request context under
`RESPONSE_CACHE_CONTEXT_KEY` as `{"key"?, "scope"?, "bust"?}` (only the fields
that were set; `"scope": None` means explicitly unscoped). Build it with
`ResponseCache.context(...)` or merge it into a context with
`ResponseCache.apply_context(ctx, ...)`; over RPC it is
`ExecutionOptions.response_cache`. The fields override the constructor's field
by field. `cache`, `ttl` and `agent_id` are instance settings and are never
taken per call (per-call `ttl`/`agentId` are ignored).

* `bust`: skip the read; the fresh response still overwrites the entry.
* `scope`: the tenant scope. Resolution: per call, else the constructor, else
  the request's resource id (`agentd.resourceId`, set by `memory.resource`)
  when it is a string, else none. `None` means explicitly unscoped: the entry is
  shared by every caller, so use it only for public, non-personalised content.
* `key`: a string is used verbatim as the cache key (no prefix, no scope, not
  hashed). Every step of the run then shares that one key: the last step's
  write wins, and a later call replays that step's response at step 0 (a step
  ending in tool calls would replay them again at every step). Prefer a key
  function for tool-calling agents. A function receives `ResponseCacheKeyInputs`
  and returns the key (it may be async); when it raises, or returns anything
  but a non-empty string, the default key is used and the call is still cached.

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
reference design. Register ResponseCache after any input processor that
changes the prompt in `process_llm_request`: the key is computed from the prompt
as it reaches this processor.

CacheService invalidation helpers: `key_prefix(agent_id)` covers every default
key of an agent (all scopes), `key_prefix(agent_id, scope)` the keys of one
scope, and `matches_unscoped(key, agent_id)` picks out the explicitly unscoped
ones (`agentd:agent-response:<agentId>:<32 hex>`). An agent id that itself
contains ":<8 hex>" can collide with another agent's scoped prefix; keep
agent ids free of colons when invalidating by prefix. String keys are never
covered by these helpers.

Backend errors never fail a run: a failed read means a live call with nothing
written (the backend is distrusted for that step), a failed write is logged.
Backends count their own failures (`CacheError`); failures they did not count
(another exception, or a stored value that is not a usable `CachedLLMResponse`)
are counted here with `cache.record_error()`.
"""

from __future__ import annotations

import copy
import enum
import hashlib
import inspect
import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields, is_dataclass
from datetime import date, datetime, time
from typing import Any, Final

from agentd.runtime.cache import CacheError, ServerCache
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
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.processors.base import (
    CachedLLMResponse,
    LLMRequestResult,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    Processor,
)
from agentd.runtime.processors.factory import option_reader, server_cache

log = logging.getLogger("agentd.processors.response_cache")

DEFAULT_RESPONSE_CACHE_TTL_SECONDS: Final = 300
#: The request-context key of the per-call overrides (the same as run.RESPONSE_CACHE_KEY).
RESPONSE_CACHE_CONTEXT_KEY: Final = "agentd.responseCache"
DEFAULT_AGENT_ID: Final = "agentd-response-cache"
#: Every default-derived key starts with this.
KEY_NAMESPACE: Final = "agentd:agent-response:"
#: The model-interface version that goes into the key's model tag.
MODEL_SPEC_VERSION: Final = "v1"
RESPONSE_CACHE_ID: Final = "response-cache"
#: The request-context key of the resource id (the same as run.RESOURCE_ID_KEY;
#: not imported, since run.py imports the built-ins package).
_RESOURCE_ID_KEY: Final = "agentd.resourceId"
#: Finish reasons of a response worth replaying.
CACHEABLE_FINISH_REASONS: Final = frozenset({"stop", "length", "tool-calls"})
#: Model-side chunk types that mark a failed response.
_FAILURE_CHUNK_TYPES: Final = frozenset({"error", "tripwire", "abort"})
_PENDING_KEY: Final = "pendingKey"
_PENDING_TTL: Final = "pendingTtl"
_HEX32: Final = re.compile(r"[0-9a-f]{32}")


class Unset(enum.Enum):
    """The type of `UNSET`: "not given" (distinct from None, which means no scope)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET


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
        return [
            _part(
                "tool-call",
                toolCallId=part.tool_call_id,
                toolName=part.tool_name,
                input=part.args,
                providerExecuted=True if part.provider_executed else None,
                providerOptions=part.provider_metadata,
            )
        ]
    if isinstance(part, ToolResultPart):
        return [
            {
                **_part(
                    "tool-result",
                    toolCallId=part.tool_call_id,
                    toolName=part.tool_name,
                    providerExecuted=True if part.provider_executed else None,
                    providerOptions=part.provider_metadata,
                ),
                "output": normalise(part.result),
                "isError": part.is_error,
            }
        ]
    if isinstance(part, DataPart):
        return [{"type": part.type, "data": normalise(part.data)}]
    if isinstance(part, SignalPart):
        from agentd.runtime.signals import render_for_model

        rendered = render_for_model(part.signal)
        return [p for inner in rendered.parts for p in _parts(inner)]
    return [normalise(part)]


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


# ---------------------------------------------------------------- per-call overrides


def _check_overrides(key: Any, scope: Any, bust: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if key is not UNSET and key is not None:
        if not (isinstance(key, str) and key) and not callable(key):
            raise ValueError(f"key must be a non-empty string or a function, not {key!r}")
        out["key"] = key
    if scope is not UNSET:
        if scope is not None and not isinstance(scope, str):
            raise ValueError(f"scope must be a string or None, not {scope!r}")
        out["scope"] = scope
    if bust is not UNSET and bust is not None:
        if not isinstance(bust, bool):
            raise ValueError(f"bust must be a bool, not {bust!r}")
        out["bust"] = bust
    return out


def _read_overrides(request_context: Mapping[str, Any]) -> dict[str, Any]:
    """The usable per-call fields; a malformed field is ignored (logged)."""
    raw = request_context.get(RESPONSE_CACHE_CONTEXT_KEY)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        log.warning("ignoring the response-cache overrides: %r is not an object", type(raw).__name__)
        return {}
    out: dict[str, Any] = {}
    for name in ("key", "scope", "bust"):
        if name not in raw:
            continue
        try:
            out.update(_check_overrides(**{"key": UNSET, "scope": UNSET, "bust": UNSET, name: raw[name]}))
        except ValueError as exc:
            log.warning("ignoring the per-call response-cache %s: %s", name, exc)
    return out


# ---------------------------------------------------------------- the processor


class ResponseCache(Processor):
    """Caches model responses per step (see the module doc)."""

    id = RESPONSE_CACHE_ID
    name = "Response Cache"

    def __init__(
        self,
        cache: ServerCache,
        *,
        ttl: float = DEFAULT_RESPONSE_CACHE_TTL_SECONDS,
        scope: str | Unset | None = UNSET,
        key: str | KeyFunction | None = None,
        bust: bool = False,
        agent_id: str = DEFAULT_AGENT_ID,
    ) -> None:
        if not isinstance(cache, ServerCache):
            raise TypeError(f"cache must be a ServerCache, not {type(cache).__name__}")
        if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        if not isinstance(bust, bool):
            raise ValueError(f"bust must be a bool, not {bust!r}")
        if not isinstance(agent_id, str) or not agent_id:
            raise ValueError(f"agent_id must be a non-empty string, not {agent_id!r}")
        if not isinstance(scope, Unset):
            _check_overrides(UNSET, scope, UNSET)
        _check_overrides(key, UNSET, bust)
        self.cache = cache
        self.ttl = float(ttl)
        self.scope = scope
        self.key = key
        self.bust = bust
        self.agent_id = agent_id

    # ------------------------------------------------------------ context helpers

    @staticmethod
    def context(
        *,
        key: str | KeyFunction | Unset = UNSET,
        scope: str | Unset | None = UNSET,
        bust: bool | Unset = UNSET,
    ) -> dict[str, Any]:
        """A new request context holding only the given per-call overrides."""
        return {RESPONSE_CACHE_CONTEXT_KEY: _check_overrides(key, scope, bust)}

    @staticmethod
    def apply_context(
        ctx: dict[str, Any],
        *,
        key: str | KeyFunction | Unset = UNSET,
        scope: str | Unset | None = UNSET,
        bust: bool | Unset = UNSET,
    ) -> dict[str, Any]:
        """Merges the given overrides into `ctx` (over any already there); returns `ctx`."""
        given = _check_overrides(key, scope, bust)
        existing = ctx.get(RESPONSE_CACHE_CONTEXT_KEY)
        ctx[RESPONSE_CACHE_CONTEXT_KEY] = {**(dict(existing) if isinstance(existing, Mapping) else {}), **given}
        return ctx

    # ------------------------------------------------------------ hooks

    async def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
        state = args.state
        # A failed earlier call (e.g. an API error retried) must never direct a write.
        state.pop(_PENDING_KEY, None)
        state.pop(_PENDING_TTL, None)
        overrides = _read_overrides(args.request_context)
        try:
            key = await self._derive_key(args, overrides)
        except Exception:
            log.exception("response cache: cannot derive the key of step %d; calling the model", args.step_number)
            return None
        if overrides.get("bust", self.bust):
            self._stash(state, key)
            return None
        try:
            stored = await self.cache.get(key)
        except CacheError as exc:  # counted by the backend
            log.warning("response cache: reading %s failed (%s); calling the model", key, exc)
            return None
        except Exception:
            log.exception("response cache: reading %s failed; calling the model", key)
            self.cache.record_error()
            return None
        if stored is None:
            self._stash(state, key)
            return None
        if _usable(stored):
            log.debug("response cache: hit %s", key)
            return LLMRequestResult(response=stored)  # the run replays copies
        log.warning("response cache: ignoring an unusable entry at %s (%s)", key, type(stored).__name__)
        self.cache.record_error()
        self._stash(state, key)  # the fresh response replaces it
        return None

    async def process_llm_response(self, args: ProcessLLMResponseArgs) -> None:
        key = args.state.pop(_PENDING_KEY, None)
        ttl = args.state.pop(_PENDING_TTL, self.ttl)
        if args.from_cache or not isinstance(key, str):
            return
        if _failed(args.chunks):
            log.debug("response cache: step %d failed; not cached", args.step_number)
            return
        chunks = list(args.chunks)  # already this processor's copies
        step_number = args.step_number
        current = args.steps[-1] if args.steps and getattr(args.steps[-1], "step_number", None) == step_number else None

        async def commit(run_result: Any) -> None:
            if getattr(run_result, "error", None) is not None or getattr(run_result, "tripwire", None) is not None:
                return
            step = _find_step(getattr(run_result, "steps", None) or [], current, step_number)
            if step is None or step.tripwire is not None:
                return
            value = CachedLLMResponse(
                chunks=chunks,
                warnings=list(step.warnings),
                tool_results=copy.deepcopy(list(step.tool_results)),
            )
            await self._write(key, value, ttl)

        if args.on_success is not None:
            args.on_success(commit)
        else:  # called outside a run: nothing later can fail it
            tool_results = copy.deepcopy(list(current.tool_results)) if current is not None else []
            await self._write(key, CachedLLMResponse(chunks=chunks, tool_results=tool_results), ttl)

    # ------------------------------------------------------------ internals

    def _stash(self, state: dict[str, Any], key: str) -> None:
        state[_PENDING_KEY] = key
        state[_PENDING_TTL] = self.ttl

    def _scope(self, overrides: Mapping[str, Any], request_context: Mapping[str, Any]) -> str | None:
        if "scope" in overrides:
            scope: str | None = overrides["scope"]
            return scope
        if not isinstance(self.scope, Unset):
            return self.scope
        resource = request_context.get(_RESOURCE_ID_KEY)
        return resource if isinstance(resource, str) else None

    async def _derive_key(self, args: ProcessLLMRequestArgs, overrides: Mapping[str, Any]) -> str:
        chosen = overrides.get("key", self.key)
        if isinstance(chosen, str):
            return chosen
        inputs = ResponseCacheKeyInputs(
            agent_id=self.agent_id,
            scope=self._scope(overrides, args.request_context),
            model=ModelIdentity.from_spec(args.model),
            prompt=args.prompt,
            step_number=args.step_number,
        )
        if chosen is not None:
            try:
                # A copy: a key function must not be able to change the outbound prompt.
                result = chosen(ResponseCacheKeyInputs(**{**_fields(inputs), "prompt": copy.deepcopy(args.prompt)}))
                if inspect.isawaitable(result):
                    result = await result
                if isinstance(result, str) and result:
                    return result
                log.warning("response cache: the key function returned %r; using the default key", result)
            except Exception:
                log.exception("response cache: the key function failed; using the default key")
        return build_response_cache_key(inputs)

    async def _write(self, key: str, value: CachedLLMResponse, ttl: float) -> None:
        try:
            await self.cache.set(key, value, ttl)
        except CacheError as exc:  # counted by the backend
            log.warning("response cache: writing %s failed (%s)", key, exc)
        except Exception:
            log.exception("response cache: writing %s failed", key)
            self.cache.record_error()


def _fields(inputs: ResponseCacheKeyInputs) -> dict[str, Any]:
    return {f.name: getattr(inputs, f.name) for f in fields(inputs)}


def _usable(value: Any) -> bool:
    return (
        isinstance(value, CachedLLMResponse)
        and isinstance(value.chunks, list)
        and any(isinstance(c, ModelFinish) for c in value.chunks)
        and isinstance(value.tool_results, list)
        and isinstance(value.warnings, list)
    )


def _failed(chunks: list[Any]) -> bool:
    """True when the step's chunks look like a failure (or never finished)."""
    finished = False
    for chunk in chunks:
        if isinstance(chunk, ModelFinish):
            if chunk.finish_reason not in CACHEABLE_FINISH_REASONS:
                return True
            finished = True
        elif getattr(chunk, "type", None) in _FAILURE_CHUNK_TYPES:
            return True
    return not finished


def _find_step(steps: list[Any], current: Any, step_number: int) -> Any:
    """The run's StepResult of the response being committed."""
    if current is not None and any(s is current for s in steps):
        return current
    if current is not None:
        return None  # that attempt was discarded (e.g. retried)
    return next((s for s in reversed(steps) if getattr(s, "step_number", None) == step_number), None)


# ---------------------------------------------------------------- agentd.toml / per-call specs


def response_cache_factory(
    caches: Mapping[str, ServerCache], default_backend: str = "memory"
) -> Callable[[dict[str, Any]], ResponseCache]:
    """A processor factory bound to the server's caches (by backend name), taking
    camelCase options `{backend: "memory"|"redis" = default_backend (the server's
    `[cache] backend`: Redis for replicas), ttl, scope (string
    or null), key (string), bust, agentId}`. Raises ValueError for an unknown
    option or backend, or a backend the server has no cache for."""

    read = option_reader(ResponseCache, extra=("backend",), skip=("cache",))

    def build(options: dict[str, Any]) -> ResponseCache:
        kwargs = read(options)
        cache = server_cache(caches, kwargs.pop("backend", default_backend), RESPONSE_CACHE_ID)
        if "key" in kwargs and not isinstance(kwargs["key"], str):
            raise ValueError("response-cache: key must be a string")
        return ResponseCache(cache, **kwargs)

    return build
