"""TokenCostControl ("token-cost-control"): a token and/or cost budget per run, thread, resource, user,
organization or session.

Put the same processor in BOTH lanes (input and output; in agentd.toml or a
call, the same entry, name, id and options, in `input_processors` and
`output_processors`: one entry is one processor, with one state):

* `process_input_step` (input lane), before every model call, reads the usage
  so far in the budget's scope (and window) and trips when usage >= limit:
  `strategy="block"` aborts the run (`Token cost control: <kind> limit reached
  (<used>/<limit>)`, where kind is `token` or `cost`, or the `message`
  template with `{usage}`, `{limit}`, `{kind}` and `{scope}` filled in; the
  runner awaits `on_violation`), `strategy="warn"` logs a warning and awaits
  `on_violation` once per run, and the run goes on. Tokens are checked before
  cost. The tripwire metadata and the violation's detail say
  `threshold: "hard"`.
* `warn_at_percent` (between 0 and 100): once usage reaches that share of a
  limit but not the limit, one warning and one `on_violation` per run with
  `threshold: "soft"`, whatever the strategy; it never aborts.
* `process_output_step` (output lane), after every model response, adds the
  step's usage: tokens (`total_tokens`, else input + output) and cost from the
  price table. A step replayed from the response cache costs nothing and is
  not counted.

Without `process_output_step` nothing is counted; a warning is logged once when
a run reaches a second step and the output hook never ran.

Limits: `max_cost` (USD) and `max_tokens` are each a number, a function of
the request context (Python only; a result that is not a positive number skips
that limit for the request, with a warning), or a table keyed by one
request-context value, `{"by": "tier", "limits": {"free": 0.5, "pro": 5},
"default": 0.5}`: a value the table does not name, or none, gets `default`,
which is required, so no caller escapes the budget by naming a tier that is
not there.

Prices: `prices={"provider/model": {"input": usd, "output": usd}}`, USD per
million input / output tokens, keyed by the step's model spec exactly as the
agent names it (`local/echo` can be priced too). Tokens times USD per million
tokens is micro-dollars: cost is kept as an integer number of micro-dollars,
rounded up per step (a budget is never under-counted). A model missing from the
table costs 0 (a warning is logged once per model when `max_cost` is set).

Scopes: `run` counts in the processor's per-request state (no cache, no
window). The others count in the server cache, keyed by a request-context
value: `thread` and `resource` by the request's thread id / resource id
(`memory.thread_id` / `memory.resource`), `user`, `organization` and
`session` by the plain keys `userId`, `organizationId` and `sessionId` (as
Mastra reads them). When the request has no such id the run scope is used.
The check reads only the stored total, which already holds this run's earlier
steps (nothing is counted twice).

Windows: `window=None` counts forever; otherwise a duration such as "30d",
"12h", "45m" (also "1h30m", or seconds as a number).

* `window_kind="fixed"`: windows are aligned on the Unix epoch (bucket
  `floor(now / window)`): usage resets when the clock enters the next window,
  at the same instant on every replica. They are not calendar months.
* `window_kind="rolling"`: the window is split into ROLLING_BUCKETS (30)
  buckets of `window / 30`; the check sums the last 30 buckets, so usage older
  than the window is forgotten, at a granularity of one bucket (usage between
  `window - window/30` and `window` ago may still count).

Counters (two integer counters per bucket, updated with the cache's atomic
`increment`, hence shared by every replica on one Redis)::

    agentd:cost:<scope>:<scopeKey>:all:<tokens|cost>                      (no window)
    agentd:cost:<scope>:<scopeKey>:<fixed|rolling>-<seconds>s:<bucket>:<tokens|cost>

With `include_breakdown`, two more per model (`<bucket>:model:<model>:<tokens|cost>`,
the model percent-encoded), read only when a violation is reported: its
detail then carries `breakdown`, up to 10 `{provider, model, tokens, cost}`,
costliest first.

`scopeKey` is the scope's id, percent-encoded (no ":"); the window
kind and length are part of the key, so processors with different windows
never share counters, while every processor with the same scope and window
shares one budget (e.g. all agents of one resource; two guards of one budget
on one agent add each model call once). Counters are written
without a ttl, i.e. pinned: the in-memory cache's LRU never evicts them and no
default TTL expires them, so a budget never silently resets. A ttl is not
used at all, because a counter with any ttl becomes evictable in the in-memory
cache (on Redis, a ttl of at least the window length would be safe). Instead,
when a new bucket is created, the buckets of the same scope key and window
that have left the window are deleted (a `keys(prefix)` scan, once per bucket).

Cost is checked before each model call, so concurrent runs of one scope can
overshoot a limit by the steps in flight; the next check trips.

Cache errors fail open: a failed read skips the check, a failed write loses
that step's usage; both are logged.

Servers register it with `token_cost_control_factory(caches, prices)`, bound to
the server's caches and the `[pricing]` table of agentd.toml.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Final, Literal
from urllib.parse import quote, unquote

from agentd.runtime.cache import ServerCache
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Usage
from agentd.runtime.durations import parse_duration
from agentd.runtime.pricing import Price, parse_prices
from agentd.runtime.processors.base import (
    ProcessInputStepArgs,
    Processor,
    ProcessorViolation,
    ProcessOutputStepArgs,
    await_violation,
)
from agentd.runtime.processors.builtins.cost_limits import Limit, LimitSpec
from agentd.runtime.processors.factory import option_reader, server_cache

log = logging.getLogger("agentd.processors.token_cost_control")

__all__ = [
    "KEY_PREFIX",
    "ROLLING_BUCKETS",
    "Price",
    "TokenCostControl",
    "parse_prices",
    "token_cost_control_factory",
]

Scope = Literal["run", "thread", "resource", "user", "organization", "session"]
WindowKind = Literal["fixed", "rolling"]
Strategy = Literal["block", "warn"]

KEY_PREFIX: Final = "agentd:cost:"
#: Buckets per rolling window.
ROLLING_BUCKETS: Final = 30
#: Most entries in a violation's breakdown.
BREAKDOWN_LIMIT: Final = 10
#: The request-context keys of the resource and thread ids (the same as
#: run.RESOURCE_ID_KEY / run.THREAD_ID_KEY; not imported, to keep run.py's
#: imports one-way).
RESOURCE_ID_KEY: Final = "agentd.resourceId"
THREAD_ID_KEY: Final = "agentd.threadId"
#: Where each scope finds its id in the request context (user, organization and
#: session read plain keys, as Mastra's do).
SCOPE_KEYS: Final = {
    "resource": RESOURCE_ID_KEY,
    "thread": THREAD_ID_KEY,
    "user": "userId",
    "organization": "organizationId",
    "session": "sessionId",
}
#: The request-context key of the counters a run's model calls were added to:
#: guards of one budget (scope and window) on one agent add each call once.
COUNTED_KEY: Final = "agentd.costCounted"

_SCOPES = ("run", *SCOPE_KEYS)
_WINDOW_KINDS = ("fixed", "rolling")
_STRATEGIES = ("block", "warn")
_MICRO = Decimal(1_000_000)
_MODEL = "model"

# state keys
_SCOPE = "scope"
_RUN_TOKENS = "run_tokens"
_RUN_COST = "run_cost"
_RUN_MODELS = "run_models"
_WARNED = "warned"
_SOFT_WARNED = "soft_warned"
_OUTPUT_SEEN = "output_seen"


def _usage_tokens(usage: Usage) -> int:
    if usage.total_tokens is not None:
        return max(0, int(usage.total_tokens))
    return max(0, int(usage.input_tokens or 0) + int(usage.output_tokens or 0))


def _usd(micro: int | Decimal) -> str:
    """Micro-dollars as a plain USD string: 4200 -> "0.0042", 10_000_000 -> "10"."""
    value = (Decimal(micro) / _MICRO).normalize()
    return format(value, "f")


def _plain(number: Decimal) -> str:
    return format(number.normalize(), "f")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class _Spend:
    tokens: int = 0
    micro_usd: int = 0


@dataclass(frozen=True, slots=True)
class _Limits:
    """This request's limits, resolved once per check."""

    tokens: Decimal | None
    cost: Decimal | None


@dataclass(frozen=True, slots=True)
class _Crossed:
    """A limit that usage reached: which, and how it reads."""

    kind: Literal["token", "cost"]
    used: str
    limit: str


class TokenCostControl(Processor):
    """A token and/or cost budget; see the module docstring. At least one of
    `max_cost` (USD) and `max_tokens` is required."""

    id = "token-cost-control"
    name = "Token cost control"
    description = "Stops (or warns) when a run, thread, resource, user, organization or session reaches its budget."

    def __init__(
        self,
        cache: ServerCache | None = None,
        *,
        max_cost: LimitSpec | None = None,
        max_tokens: LimitSpec | None = None,
        scope: Scope = "run",
        window: str | float | timedelta | None = None,
        window_kind: WindowKind = "fixed",
        strategy: Strategy = "block",
        message: str | None = None,
        warn_at_percent: float | None = None,
        include_breakdown: bool = False,
        prices: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_cost is None and max_tokens is None:
            raise ValueError("token-cost-control: set maxCost and/or maxTokens")
        self.max_cost = Limit.parse(max_cost, "maxCost")
        self.max_tokens = Limit.parse(max_tokens, "maxTokens", whole=True)
        if scope not in _SCOPES:
            raise ValueError(f"token-cost-control: scope must be one of {', '.join(_SCOPES)}, got {scope!r}")
        if window_kind not in _WINDOW_KINDS:
            raise ValueError(
                f"token-cost-control: windowKind must be one of {', '.join(_WINDOW_KINDS)}, got {window_kind!r}"
            )
        if strategy not in _STRATEGIES:
            raise ValueError(f"token-cost-control: strategy must be one of {', '.join(_STRATEGIES)}, got {strategy!r}")
        if message is not None and (not isinstance(message, str) or not message.strip()):
            raise ValueError("token-cost-control: message must be a non-empty template")
        if warn_at_percent is not None and (
            isinstance(warn_at_percent, bool)
            or not isinstance(warn_at_percent, int | float)
            or not 0 < warn_at_percent < 100
        ):
            raise ValueError(f"token-cost-control: warnAtPercent must be between 0 and 100, got {warn_at_percent!r}")
        if not isinstance(include_breakdown, bool):
            raise ValueError("token-cost-control: includeBreakdown must be true or false")
        if scope != "run" and cache is None:
            raise ValueError(f"token-cost-control: scope {scope!r} needs a server cache")
        self.cache = cache
        self.scope: Scope = scope
        self.window_kind: WindowKind = window_kind
        self.strategy: Strategy = strategy
        self.message = message
        self.warn_at_percent = None if warn_at_percent is None else Decimal(str(warn_at_percent))
        self.include_breakdown = include_breakdown
        self.window_seconds: float | None = None
        self.window_label: str | None = None
        if window is not None:
            try:
                seconds = parse_duration(window).total_seconds()
            except ValueError as exc:
                raise ValueError(f"token-cost-control: window: {exc}") from None
            if seconds < 1:
                raise ValueError(f"token-cost-control: window must be at least one second, got {window!r}")
            self.window_seconds = seconds
            self.window_label = window if isinstance(window, str) else f"{seconds:g}s"
        self.prices = parse_prices(prices, "token-cost-control: prices")
        self.clock = clock
        self._unpriced_logged: set[str] = set()
        self._lane_warning_logged = False

    def __repr__(self) -> str:
        limits = ", ".join(
            f"{k}={v.fixed if v.fixed is not None and v.by is None else 'per request'}"
            for k, v in (("max_tokens", self.max_tokens), ("max_cost", self.max_cost))
            if v is not None
        )
        return f"<TokenCostControl id={self.id!r} {limits} scope={self.scope!r} window={self.window_label!r}>"

    # ------------------------------------------------------------ hooks

    async def process_input_step(self, args: ProcessInputStepArgs) -> None:
        scope, scope_key = self._resolve_scope(args.state, args.request_context, args.run_id)
        if args.steps and not args.state.get(_OUTPUT_SEEN) and not self._lane_warning_logged:
            self._lane_warning_logged = True
            log.warning(
                "%s: process_output_step never ran; put the processor in the output lane too, or no usage is counted",
                self.id,
            )
        limits = self._limits(args.request_context)
        if limits.tokens is None and limits.cost is None:
            return None
        now = self.clock()
        spend = await self._read(args.state, scope, scope_key, now)
        if spend is None:
            return None  # the cache failed: fail open
        crossed = self._crossed(spend, limits, Decimal(100))
        if crossed is None:
            await self._soft_warning(args, spend, limits, scope, scope_key, now)
            return None
        message = self._format(crossed, scope)
        metadata = await self._metadata(args.state, spend, limits, crossed.kind, scope, scope_key, now, "hard")
        if self.strategy == "block":
            args.abort(message, metadata=metadata)  # the runner reports the violation
        if not args.state.get(_WARNED):
            args.state[_WARNED] = True
            log.warning("%s (%s %s)", message, scope, scope_key)
            await await_violation(self, ProcessorViolation(self.id, message, metadata))
        return None

    async def process_output_step(self, args: ProcessOutputStepArgs) -> None:
        args.state[_OUTPUT_SEEN] = True
        step = args.steps[-1] if args.steps else None
        if step is not None and step.from_cache:
            return None  # replayed from the response cache: no model was paid
        model = step.model if step is not None else ""
        spend = _Spend(_usage_tokens(args.usage), self._micro_usd(model, args.usage))
        if spend.tokens == 0 and spend.micro_usd == 0:
            return None
        scope, scope_key = self._resolve_scope(args.state, args.request_context, args.run_id)
        if scope == "run":
            args.state[_RUN_TOKENS] = args.state.get(_RUN_TOKENS, 0) + spend.tokens
            args.state[_RUN_COST] = args.state.get(_RUN_COST, 0) + spend.micro_usd
            if self.include_breakdown:
                tokens, micro = args.state.setdefault(_RUN_MODELS, {}).get(model, (0, 0))
                args.state[_RUN_MODELS][model] = (tokens + spend.tokens, micro + spend.micro_usd)
            return None
        if not _first_to_count(args, self._prefix(scope, scope_key)):
            return None  # another guard of this budget added this call already
        await self._record(scope, scope_key, spend, self.clock(), model)
        return None

    # ------------------------------------------------------------ internals

    def _limits(self, context: Mapping[str, Any]) -> _Limits:
        return _Limits(
            None if self.max_tokens is None else self.max_tokens.resolve(context),
            None if self.max_cost is None else self.max_cost.resolve(context),
        )

    def _resolve_scope(self, state: dict[str, Any], context: Mapping[str, Any], run_id: str) -> tuple[str, str]:
        resolved: tuple[str, str] | None = state.get(_SCOPE)
        if resolved is not None:
            return resolved
        scope: str = self.scope
        key: Any = context.get(SCOPE_KEYS[scope]) if scope != "run" else None
        if scope != "run" and not (isinstance(key, str) and key):
            log.debug("%s: no %s id in the request; counting this run only", self.id, scope)
            scope = "run"
        resolved = (scope, run_id) if scope == "run" else (scope, str(key))
        state[_SCOPE] = resolved
        return resolved

    def _micro_usd(self, model: str, usage: Usage) -> int:
        price = self.prices.get(model)
        if price is None:
            if self.max_cost is not None and model not in self._unpriced_logged:
                self._unpriced_logged.add(model)
                log.warning("%s: model %r has no price in the price table; its usage costs 0", self.id, model)
            return 0
        return price.micro_usd(usage)

    def _window_tag(self) -> str | None:
        if self.window_seconds is None:
            return None
        return f"{self.window_kind}-{self.window_seconds:f}".rstrip("0").rstrip(".") + "s"

    def _bucket_seconds(self) -> float:
        assert self.window_seconds is not None
        if self.window_kind == "rolling":
            return self.window_seconds / ROLLING_BUCKETS
        return self.window_seconds

    def _buckets(self, now: float) -> list[int]:
        """The bucket indices the window covers at `now`, the current one last."""
        if self.window_seconds is None:
            return []
        current = math.floor(now / self._bucket_seconds())
        if self.window_kind == "fixed":
            return [current]
        return list(range(current - ROLLING_BUCKETS + 1, current + 1))

    def _prefix(self, scope: str, scope_key: str) -> str:
        tag = self._window_tag()
        base = f"{KEY_PREFIX}{scope}:{quote(scope_key, safe='')}:"
        return base + (f"{tag}:" if tag else "")

    def _key(self, scope: str, scope_key: str, bucket: int | None, counter: str, model: str | None = None) -> str:
        prefix = self._prefix(scope, scope_key) + ("all" if bucket is None else str(bucket))
        return f"{prefix}:{counter}" if model is None else f"{prefix}:{_MODEL}:{quote(model, safe='')}:{counter}"

    async def _read(self, state: dict[str, Any], scope: str, scope_key: str, now: float) -> _Spend | None:
        if scope == "run":
            return _Spend(int(state.get(_RUN_TOKENS, 0)), int(state.get(_RUN_COST, 0)))
        assert self.cache is not None
        cache = self.cache
        buckets: list[int | None] = list(self._buckets(now)) or [None]
        keys = [self._key(scope, scope_key, b, c) for b in buckets for c in ("tokens", "cost")]
        try:
            values = await asyncio.gather(*(cache.get(k) for k in keys))
            tokens = micro = 0
            for key, value in zip(keys, values, strict=True):
                if value is None:
                    continue
                if not isinstance(value, int) or isinstance(value, bool):
                    raise TypeError(f"{key} holds {type(value).__name__}, not a counter")
                if key.endswith(":tokens"):
                    tokens += value
                else:
                    micro += value
        except Exception as exc:
            raise_if_cancelling(exc)
            log.warning("%s: reading the usage of %s %s failed (%s); not checked", self.id, scope, scope_key, exc)
            return None
        return _Spend(tokens, micro)

    async def _record(self, scope: str, scope_key: str, spend: _Spend, now: float, model: str) -> None:
        assert self.cache is not None
        cache = self.cache
        buckets = self._buckets(now)
        bucket = buckets[-1] if buckets else None
        created = False
        per_model = (None, model) if self.include_breakdown else (None,)
        try:
            for counter, by in (("tokens", spend.tokens), ("cost", spend.micro_usd)):
                if by <= 0:
                    continue
                for which in per_model:
                    # No ttl: pinned, never evicted, never expired (see the module docstring).
                    value = await cache.increment(self._key(scope, scope_key, bucket, counter, which), by)
                    created = created or value == by
        except Exception as exc:
            raise_if_cancelling(exc)
            log.warning(
                "%s: recording %d tokens / %s USD for %s %s failed (%s); that usage is lost",
                self.id,
                spend.tokens,
                _usd(spend.micro_usd),
                scope,
                scope_key,
                exc,
            )
            return
        if created and buckets:
            await self._prune(scope, scope_key, buckets[0])

    async def _prune(self, scope: str, scope_key: str, oldest_live: int) -> None:
        """Deletes the buckets of this scope key and window older than `oldest_live`."""
        assert self.cache is not None
        prefix = self._prefix(scope, scope_key)
        try:
            for key in await self.cache.keys(prefix):
                bucket, _, _counter = key[len(prefix) :].partition(":")
                try:
                    index = int(bucket)
                except ValueError:
                    continue
                if index < oldest_live:
                    await self.cache.delete(key)
        except Exception as exc:
            raise_if_cancelling(exc)
            log.warning("%s: pruning old buckets of %s %s failed (%s)", self.id, scope, scope_key, exc)

    async def _breakdown(self, state: dict[str, Any], scope: str, scope_key: str, now: float) -> list[dict[str, Any]]:
        """Usage per model, costliest first (read only when a violation is reported)."""
        per_model: dict[str, list[int]] = {}
        if scope == "run":
            for model, (tokens, micro) in state.get(_RUN_MODELS, {}).items():
                per_model[model] = [tokens, micro]
        else:
            assert self.cache is not None
            prefix = self._prefix(scope, scope_key)
            live = {str(b) for b in self._buckets(now)} or {"all"}
            try:
                for key in await self.cache.keys(prefix):
                    parts = key[len(prefix) :].split(":")  # <bucket>:model:<model, quoted>:<counter>
                    if len(parts) != 4 or parts[1] != _MODEL or parts[0] not in live:
                        continue
                    _bucket, _kind, quoted, counter = parts
                    value = await self.cache.get(key)
                    if isinstance(value, int) and not isinstance(value, bool):
                        totals = per_model.setdefault(unquote(quoted), [0, 0])
                        totals[0 if counter == "tokens" else 1] += value
            except Exception as exc:
                raise_if_cancelling(exc)
                log.warning("%s: reading the breakdown of %s %s failed (%s)", self.id, scope, scope_key, exc)
                return []
        rows = sorted(per_model.items(), key=lambda item: (-item[1][1], -item[1][0], item[0]))
        return [
            {
                "provider": model.split("/", 1)[0] if "/" in model else None,
                "model": model,
                "tokens": tokens,
                "cost": float(Decimal(micro) / _MICRO),
            }
            for model, (tokens, micro) in rows[:BREAKDOWN_LIMIT]
        ]

    def _crossed(self, spend: _Spend, limits: _Limits, percent: Decimal) -> _Crossed | None:
        """The first limit (tokens, then cost) whose `percent` share usage reached."""
        share = percent / 100
        if limits.tokens is not None and spend.tokens >= limits.tokens * share:
            return _Crossed("token", str(spend.tokens), _plain(limits.tokens))
        if limits.cost is not None and spend.micro_usd >= limits.cost * _MICRO * share:
            return _Crossed("cost", f"${_usd(spend.micro_usd)}", f"${_plain(limits.cost)}")
        return None

    def _format(self, crossed: _Crossed, scope: str) -> str:
        if self.message is None:
            return f"Token cost control: {crossed.kind} limit reached ({crossed.used}/{crossed.limit})"
        fields = {"usage": crossed.used, "limit": crossed.limit, "kind": crossed.kind, "scope": scope}
        text = self.message
        for name, value in fields.items():
            text = text.replace("{" + name + "}", value)
        return text

    async def _soft_warning(
        self, args: ProcessInputStepArgs, spend: _Spend, limits: _Limits, scope: str, scope_key: str, now: float
    ) -> None:
        """One warning and one on_violation per run once usage reaches warn_at_percent of a limit."""
        if self.warn_at_percent is None or args.state.get(_SOFT_WARNED):
            return
        crossed = self._crossed(spend, limits, self.warn_at_percent)
        if crossed is None:
            return
        args.state[_SOFT_WARNED] = True
        percent = _plain(self.warn_at_percent)
        message = (
            f"Token cost control: {crossed.kind} usage reached {percent}% of the limit ({crossed.used}/{crossed.limit})"
        )
        metadata = await self._metadata(args.state, spend, limits, crossed.kind, scope, scope_key, now, "soft")
        log.warning("%s (%s %s)", message, scope, scope_key)
        await await_violation(self, ProcessorViolation(self.id, message, metadata))

    async def _metadata(
        self,
        state: dict[str, Any],
        spend: _Spend,
        limits: _Limits,
        kind: str,
        scope: str,
        scope_key: str,
        now: float,
        threshold: Literal["hard", "soft"],
    ) -> dict[str, Any]:
        limit: dict[str, Any] = {}
        if limits.tokens is not None:
            limit["tokens"] = int(limits.tokens) if limits.tokens == int(limits.tokens) else float(limits.tokens)
        if limits.cost is not None:
            limit["cost"] = float(limits.cost)
        window: dict[str, Any] | None = None
        if self.window_seconds is not None and scope != "run":
            bucket = self._bucket_seconds()
            current = math.floor(now / bucket)
            if self.window_kind == "fixed":
                start, end = current * bucket, (current + 1) * bucket
            else:
                start, end = (current - ROLLING_BUCKETS + 1) * bucket, now
            window = {
                "length": self.window_label,
                "seconds": self.window_seconds,
                "kind": self.window_kind,
                "start": _iso(start),
                "end": _iso(end),
            }
        metadata: dict[str, Any] = {
            "processorId": self.id,
            "limitType": kind,
            "threshold": threshold,
            "usage": {"tokens": spend.tokens, "cost": float(Decimal(spend.micro_usd) / _MICRO)},
            "limit": limit,
            "scope": scope,
            "scopeKey": scope_key,
            "window": window,
            "strategy": self.strategy,
        }
        if self.include_breakdown:
            metadata["breakdown"] = await self._breakdown(state, scope, scope_key, now)
        return metadata


def _first_to_count(args: ProcessOutputStepArgs, counter: str) -> bool:
    """True once per model call and counter. The request context is the run's:
    its step objects (a retried step is a new one) stay alive while it runs."""
    counted: set[tuple[str, int, str]] = args.request_context.setdefault(COUNTED_KEY, set())
    mark = (args.run_id, id(args.steps[-1]) if args.steps else args.step_number, counter)
    if mark in counted:
        return False
    counted.add(mark)
    return True


def token_cost_control_factory(
    caches: Mapping[str, ServerCache], prices: Mapping[str, Any] | None = None, default_backend: str = "memory"
) -> Callable[[dict[str, Any]], TokenCostControl]:
    """A processor factory bound to the server's caches (by backend name) and its
    price table (`[pricing]`), taking camelCase options `{backend: "memory"|"redis"
    = default_backend (the server's `[cache] backend`), maxCost, maxTokens, scope,
    window, windowKind, strategy, message, warnAtPercent, includeBreakdown}`.
    Raises ValueError for an unknown option or backend, a backend the server has
    no cache for, or an invalid value."""
    table = parse_prices(prices)

    read = option_reader(TokenCostControl, extra=("backend",), skip=("cache", "prices", "clock"))

    def build(options: dict[str, Any]) -> TokenCostControl:
        kwargs = read(options)
        cache = server_cache(caches, kwargs.pop("backend", default_backend), TokenCostControl.id)
        return TokenCostControl(cache, prices=table, **kwargs)

    return build
