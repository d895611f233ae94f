"""TokenCostControl ("token-cost-control"): a token and/or cost budget per run, thread or resource.

Put the same processor in BOTH lanes (input and output; in agentd.toml, the
same entry in `input_processors` and `output_processors`, with the same id):

* `process_input_step` (input lane), before every model call, reads the usage
  so far in the budget's scope (and window) and trips when usage >= limit:
  `strategy="block"` aborts the run (`Token cost control: <kind> limit reached
  (<used>/<limit>)`, where kind is `token` or `cost`; the runner calls
  `on_violation`), `strategy="warn"` logs a warning and calls `on_violation`
  once per run, and the run goes on. Tokens are checked before cost.
* `process_output_step` (output lane), after every model response, adds the
  step's usage: tokens (`total_tokens`, else input + output) and cost from the
  price table. A step replayed from the response cache costs nothing and is
  not counted.

Without `process_output_step` nothing is counted; a warning is logged once when
a run reaches a second step and the output hook never ran.

Prices: `prices={"provider/model": {"input": usd, "output": usd}}`, USD per
million input / output tokens, keyed by the step's model spec exactly as the
agent names it (`local/echo` can be priced too). Tokens times USD per million
tokens is micro-dollars: cost is kept as an integer number of micro-dollars,
rounded up per step (a budget is never under-counted). A model missing from the
table costs 0 (a warning is logged once per model when `max_cost` is set).

Scopes: `run` counts in the processor's per-request state (no cache, no
window). `thread` and `resource` count in the server cache, keyed by the thread
id / resource id of the request (`memory.thread_id` / `memory.resource`); when
the request has no such id the run scope is used. The check reads only the
stored total, which already holds this run's earlier steps (nothing is counted
twice).

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

`scopeKey` is the thread or resource id, percent-encoded (no ":"); the window
kind and length are part of the key, so processors with different windows
never share counters, while every processor with the same scope and window
shares one budget (e.g. all agents of one resource). Counters are written
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
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Literal
from urllib.parse import quote

from agentd.runtime.cache import ServerCache
from agentd.runtime.chunks import Usage
from agentd.runtime.durations import parse_duration
from agentd.runtime.processors.base import (
    ProcessInputStepArgs,
    Processor,
    ProcessorViolation,
    ProcessOutputStepArgs,
    report_violation,
)
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

Scope = Literal["run", "thread", "resource"]
WindowKind = Literal["fixed", "rolling"]
Strategy = Literal["block", "warn"]

KEY_PREFIX: Final = "agentd:cost:"
#: Buckets per rolling window.
ROLLING_BUCKETS: Final = 30
#: The request-context keys of the resource and thread ids (the same as
#: run.RESOURCE_ID_KEY / run.THREAD_ID_KEY; not imported, to keep run.py's
#: imports one-way).
RESOURCE_ID_KEY: Final = "agentd.resourceId"
THREAD_ID_KEY: Final = "agentd.threadId"

_SCOPES = ("run", "thread", "resource")
_WINDOW_KINDS = ("fixed", "rolling")
_STRATEGIES = ("block", "warn")
_MICRO = Decimal(1_000_000)

# state keys
_SCOPE = "scope"
_RUN_TOKENS = "run_tokens"
_RUN_COST = "run_cost"
_WARNED = "warned"
_OUTPUT_SEEN = "output_seen"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million input and output tokens."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)

    def micro_usd(self, usage: Usage) -> int:
        """The cost of `usage` in micro-dollars, rounded up."""
        input_tokens, output_tokens = usage.input_tokens, usage.output_tokens
        if input_tokens is None and output_tokens is None:
            input_tokens = usage.total_tokens  # nothing to split by: priced as input
        cost = Decimal(input_tokens or 0) * self.input + Decimal(output_tokens or 0) * self.output
        return max(0, math.ceil(cost))


def _decimal(value: Any, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        raise ValueError(f"{where}: must be a number, got {value!r}")
    try:
        number = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"{where}: must be a number, got {value!r}") from None
    if not number.is_finite() or number < 0:
        raise ValueError(f"{where}: must be a finite number >= 0, got {value!r}")
    return number


def parse_prices(table: Mapping[str, Any] | None, where: str = "pricing") -> dict[str, Price]:
    """`{"provider/model": {"input": usd_per_million, "output": usd_per_million}}`
    (a missing side costs 0; Price values pass through). ValueError names the bad key."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise ValueError(f"{where}: must be a table of provider/model = {{ input, output }}")
    prices: dict[str, Price] = {}
    for model, entry in table.items():
        at = f'{where}."{model}"'
        if not isinstance(model, str) or "/" not in model:
            raise ValueError(f"{at}: the key must be a provider/model spec")
        if isinstance(entry, Price):
            prices[model] = entry
            continue
        if not isinstance(entry, Mapping):
            raise ValueError(f"{at}: must be a table with input and output (USD per million tokens)")
        unknown = sorted(str(k) for k in entry if k not in ("input", "output"))
        if unknown:
            raise ValueError(f"{at}: unknown key(s) {', '.join(unknown)} (allowed: input, output)")
        prices[model] = Price(
            input=_decimal(entry.get("input", 0), f"{at}.input"),
            output=_decimal(entry.get("output", 0), f"{at}.output"),
        )
    return prices


def _usage_tokens(usage: Usage) -> int:
    if usage.total_tokens is not None:
        return max(0, int(usage.total_tokens))
    return max(0, int(usage.input_tokens or 0) + int(usage.output_tokens or 0))


def _usd(micro: int | Decimal) -> str:
    """Micro-dollars as a plain USD string: 4200 -> "0.0042", 10_000_000 -> "10"."""
    value = (Decimal(micro) / _MICRO).normalize()
    return format(value, "f")


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class _Spend:
    tokens: int = 0
    micro_usd: int = 0


class TokenCostControl(Processor):
    """A token and/or cost budget; see the module docstring. At least one of
    `max_cost` (USD) and `max_tokens` is required."""

    id = "token-cost-control"
    name = "Token cost control"
    description = "Stops (or warns) when a run, thread or resource reaches its token or cost budget."

    def __init__(
        self,
        cache: ServerCache | None = None,
        *,
        max_cost: float | None = None,
        max_tokens: int | None = None,
        scope: Scope = "run",
        window: str | float | timedelta | None = None,
        window_kind: WindowKind = "fixed",
        strategy: Strategy = "block",
        prices: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_cost is None and max_tokens is None:
            raise ValueError("token-cost-control: set maxCost and/or maxTokens")
        self.max_cost = None if max_cost is None else _decimal(max_cost, "token-cost-control: maxCost")
        if self.max_cost is not None and self.max_cost <= 0:
            raise ValueError("token-cost-control: maxCost must be greater than 0")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int | float)):
            raise ValueError(f"token-cost-control: maxTokens must be a number, got {max_tokens!r}")
        if max_tokens is not None and (max_tokens != int(max_tokens) or max_tokens <= 0):
            raise ValueError("token-cost-control: maxTokens must be a whole number greater than 0")
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        if scope not in _SCOPES:
            raise ValueError(f"token-cost-control: scope must be one of {', '.join(_SCOPES)}, got {scope!r}")
        if window_kind not in _WINDOW_KINDS:
            raise ValueError(
                f"token-cost-control: windowKind must be one of {', '.join(_WINDOW_KINDS)}, got {window_kind!r}"
            )
        if strategy not in _STRATEGIES:
            raise ValueError(f"token-cost-control: strategy must be one of {', '.join(_STRATEGIES)}, got {strategy!r}")
        if scope != "run" and cache is None:
            raise ValueError(f"token-cost-control: scope {scope!r} needs a server cache")
        self.cache = cache
        self.scope: Scope = scope
        self.window_kind: WindowKind = window_kind
        self.strategy: Strategy = strategy
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
            f"{k}={v}" for k, v in (("max_tokens", self.max_tokens), ("max_cost", self.max_cost)) if v is not None
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
        now = self.clock()
        spend = await self._read(args.state, scope, scope_key, now)
        if spend is None:
            return None  # the cache failed: fail open
        violation = self._violation(spend)
        if violation is None:
            return None
        kind, used, limit = violation
        message = f"Token cost control: {kind} limit reached ({used}/{limit})"
        metadata = self._metadata(spend, kind, scope, scope_key, now)
        if self.strategy == "block":
            args.abort(message, metadata=metadata)  # the runner reports the violation
        if not args.state.get(_WARNED):
            args.state[_WARNED] = True
            log.warning("%s (%s %s)", message, scope, scope_key)
            report_violation(self, ProcessorViolation(self.id, message, metadata))
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
            return None
        await self._record(scope, scope_key, spend, self.clock())
        return None

    # ------------------------------------------------------------ internals

    def _resolve_scope(self, state: dict[str, Any], context: Mapping[str, Any], run_id: str) -> tuple[str, str]:
        resolved: tuple[str, str] | None = state.get(_SCOPE)
        if resolved is not None:
            return resolved
        scope: str = self.scope
        key: Any = None
        if scope == "resource":
            key = context.get(RESOURCE_ID_KEY)
        elif scope == "thread":
            key = context.get(THREAD_ID_KEY)
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

    def _key(self, scope: str, scope_key: str, bucket: int | None, counter: str) -> str:
        prefix = self._prefix(scope, scope_key)
        return f"{prefix}all:{counter}" if bucket is None else f"{prefix}{bucket}:{counter}"

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
            log.warning("%s: reading the usage of %s %s failed (%s); not checked", self.id, scope, scope_key, exc)
            return None
        return _Spend(tokens, micro)

    async def _record(self, scope: str, scope_key: str, spend: _Spend, now: float) -> None:
        assert self.cache is not None
        cache = self.cache
        buckets = self._buckets(now)
        bucket = buckets[-1] if buckets else None
        created = False
        try:
            for counter, by in (("tokens", spend.tokens), ("cost", spend.micro_usd)):
                if by <= 0:
                    continue
                # No ttl: pinned, never evicted, never expired (see the module docstring).
                value = await cache.increment(self._key(scope, scope_key, bucket, counter), by)
                created = created or value == by
        except Exception as exc:
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
            log.warning("%s: pruning old buckets of %s %s failed (%s)", self.id, scope, scope_key, exc)

    def _violation(self, spend: _Spend) -> tuple[str, str, str] | None:
        if self.max_tokens is not None and spend.tokens >= self.max_tokens:
            return "token", str(spend.tokens), str(self.max_tokens)
        if self.max_cost is not None and spend.micro_usd >= self.max_cost * _MICRO:
            return "cost", f"${_usd(spend.micro_usd)}", f"${format(self.max_cost.normalize(), 'f')}"
        return None

    def _metadata(self, spend: _Spend, kind: str, scope: str, scope_key: str, now: float) -> dict[str, Any]:
        limit: dict[str, Any] = {}
        if self.max_tokens is not None:
            limit["tokens"] = self.max_tokens
        if self.max_cost is not None:
            limit["cost"] = float(self.max_cost)
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
        return {
            "processorId": self.id,
            "limitType": kind,
            "usage": {"tokens": spend.tokens, "cost": float(Decimal(spend.micro_usd) / _MICRO)},
            "limit": limit,
            "scope": scope,
            "scopeKey": scope_key,
            "window": window,
            "strategy": self.strategy,
        }


def token_cost_control_factory(
    caches: Mapping[str, ServerCache], prices: Mapping[str, Any] | None = None, default_backend: str = "memory"
) -> Callable[[dict[str, Any]], TokenCostControl]:
    """A processor factory bound to the server's caches (by backend name) and its
    price table (`[pricing]`), taking camelCase options `{backend: "memory"|"redis"
    = default_backend (the server's `[cache] backend`), maxCost, maxTokens, scope,
    window, windowKind, strategy}`. Raises ValueError for an unknown option or backend, a backend the server has no
    cache for, or an invalid value."""
    table = parse_prices(prices)

    read = option_reader(TokenCostControl, extra=("backend",), skip=("cache", "prices", "clock"))

    def build(options: dict[str, Any]) -> TokenCostControl:
        kwargs = read(options)
        cache = server_cache(caches, kwargs.pop("backend", default_backend), TokenCostControl.id)
        return TokenCostControl(cache, prices=table, **kwargs)

    return build
