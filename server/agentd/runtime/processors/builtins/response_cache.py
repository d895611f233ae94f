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

The default key (`build_response_cache_key`), what it covers, and how an
agent's entries are found to invalidate them: `agentd.runtime.response_keys`.
Register ResponseCache after any input processor that changes the prompt in
`process_llm_request`: the key is computed from the prompt as it reaches this
processor.

Backend errors never fail a run: a failed read means a live call with nothing
written (the backend is distrusted for that step), a failed write is logged.
Backends count their own failures (`CacheError`); failures they did not count
(another exception, or a stored value that is not a usable `CachedLLMResponse`)
are counted here with `cache.record_error()`.
"""

from __future__ import annotations

import copy
import inspect
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, Final

from agentd.runtime.background import is_deferred
from agentd.runtime.cache import CacheError, ServerCache
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.identity import DEFAULT_TENANT, TENANT_KEY, scoped, tenant_of
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.processors.base import (
    CachedLLMResponse,
    LLMRequestResult,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    Processor,
)
from agentd.runtime.processors.factory import option_reader, server_cache
from agentd.runtime.response_keys import KeyFunction, ModelIdentity, ResponseCacheKeyInputs, build_response_cache_key
from agentd.runtime.unset import UNSET, Unset

log = logging.getLogger("agentd.processors.response_cache")

DEFAULT_RESPONSE_CACHE_TTL_SECONDS: Final = 300
#: The request-context key of the per-call overrides (the same as run.RESPONSE_CACHE_KEY).
RESPONSE_CACHE_CONTEXT_KEY: Final = "agentd.responseCache"
DEFAULT_AGENT_ID: Final = "agentd-response-cache"
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
_BACKENDS: Final = ("memory", "redis")
_FACTORY_OPTIONS: Final = {
    "backend": "backend",
    "ttl": "ttl",
    "scope": "scope",
    "key": "key",
    "bust": "bust",
    "agent_id": "agentId",
}


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
            raise_if_cancelling(exc)
            log.warning("response cache: reading %s failed (%s); calling the model", key, exc)
            return None
        except Exception as exc:
            raise_if_cancelling(exc)
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
            if any(is_deferred(r.result) for r in step.tool_results):
                # A replay would answer a background call deferred, with no work behind it.
                log.debug("response cache: step %d has a background call still running; not cached", step_number)
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
        # A tenant's entries are its own: its key, its agent and its scope carry its name
        # (tenant `default`, and every run without authentication, keys as it always did).
        tenant = args.request_context.get(TENANT_KEY)
        tenant = tenant if isinstance(tenant, str) else DEFAULT_TENANT
        chosen = overrides.get("key", self.key)
        if isinstance(chosen, str):
            return scoped(tenant, chosen)
        scope = self._scope(overrides, args.request_context)
        if scope is not None and tenant_of(scope) != tenant:
            scope = scoped(tenant, scope)
        inputs = ResponseCacheKeyInputs(
            agent_id=scoped(tenant, self.agent_id),
            scope=scope,
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
            except Exception as exc:
                raise_if_cancelling(exc)
                log.exception("response cache: the key function failed; using the default key")
        return build_response_cache_key(inputs)

    async def _write(self, key: str, value: CachedLLMResponse, ttl: float) -> None:
        try:
            await self.cache.set(key, value, ttl)
        except CacheError as exc:  # counted by the backend
            raise_if_cancelling(exc)
            log.warning("response cache: writing %s failed (%s)", key, exc)
        except Exception as exc:
            raise_if_cancelling(exc)
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
