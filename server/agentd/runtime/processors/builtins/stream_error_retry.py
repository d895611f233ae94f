"""StreamErrorRetryProcessor: re-issues a model call that failed transiently.

A default error processor (last in the default order, so repair processors get
the first look at a rejected request). It never changes messages: it only
decides whether the same call is worth sending again, and how long to wait.

Decision, for each error of the cause chain (`__cause__`/`__context__`,
cycle-safe), outermost first:

1. the caller's matchers, in order, then the opt-in bad-request matcher
   (`retry_bad_requests`: any HTTP 400, at most one retry);
2. the built-in transient check (see `is_transient_error`).

The first hit gives the retry policy (its own `max_retries`/`delay_ms`, or the
processor's). Without a hit, `retry_unknown_errors` retries anything that is not
a known terminal authentication error (see `is_terminal_auth_error`), which is
never retried by the built-in checks either: only a caller matcher that picks
it out explicitly can retry it. A policy is spent once
`retry_count >= max_retries`: the shared retry counter of the run is what is
compared, and the run's own cap (`max_processor_retries`, 3 when unset) still
applies on top, so `max_retries` can never raise it. Model-level retries and
these retries add up: when this processor is a request's only retry mechanism,
keep model retries at 0.

Wait before retrying = max(configured delay, min(provider Retry-After,
`max_retry_after_ms`)); the wait ends early (and the error is not handled) when
the run is cancelled.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from agentd.runtime.messages import utcnow
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.processors.base import APIErrorResult, ProcessAPIErrorArgs, Processor
from agentd.runtime.processors.builtins.error_chain import (
    codes_of,
    details_of,
    iter_error_chain,
    status_of,
    texts_of,
)
from agentd.runtime.processors.factory import dataclass_from_options

log = logging.getLogger(__name__)

STREAM_ERROR_RETRY_ID = "stream-error-retry-processor"

#: A delay in milliseconds, or a function of the hook's args returning one.
DelayMs = float | int | Callable[[ProcessAPIErrorArgs], float | int | Awaitable[float | int]]
#: Called with the hook's args and the chosen delay (ms) right before waiting.
OnRetry = Callable[[ProcessAPIErrorArgs, float], Any]
#: Tests one error of the chain.
MatchFn = Callable[[BaseException], bool]

#: Provider codes/types (substrings) that mark a transient failure.
TRANSIENT_CODE_MARKERS = (
    "rate_limit",
    "server_error",
    "internal_error",
    "timeout",
    "temporarily_unavailable",
    "service_unavailable",
    "overloaded",
)
#: Provider codes/types of terminal authentication and permission errors.
TERMINAL_AUTH_CODES = frozenset(
    {"access_denied", "authentication_error", "forbidden", "invalid_api_key", "permission_denied"}
)
_RETRY_HINT = re.compile(r"you can retry your request", re.IGNORECASE)
_CONNECTION_RESET = re.compile(r"econnreset|socket hang up", re.IGNORECASE)
_RETRY_AFTER_MS_KEYS = ("retry_after_ms", "retryAfterMs", "retry-after-ms")
_RETRY_AFTER_S_KEYS = ("retry-after", "retry_after", "retryAfter")
_BAD_REQUEST_MAX_RETRIES = 1


@dataclass(frozen=True, slots=True)
class RetryMatcher:
    """One caller matcher. `match` is a predicate over one error of the chain,
    or a regular expression searched (case-insensitively) in its messages.
    `max_retries`/`delay_ms`/`on_retry` default to the processor's."""

    match: MatchFn | str | re.Pattern[str]
    max_retries: int | None = None
    delay_ms: DelayMs | None = None
    on_retry: OnRetry | None = None
    name: str = "matcher"


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    predicate: MatchFn
    max_retries: int | None
    delay_ms: DelayMs | None
    on_retry: OnRetry | None


# ---------------------------------------------------------------- classification


def is_connection_reset(error: BaseException) -> bool:
    if isinstance(error, ConnectionResetError) or getattr(error, "errno", None) == errno.ECONNRESET:
        return True
    if any(code == "econnreset" for code in codes_of(error)):
        return True
    return any(_CONNECTION_RESET.search(text) for text in texts_of(error))


def is_terminal_auth_error(error: BaseException) -> bool:
    """401/403, or an authentication/permission provider code, anywhere in the chain."""
    for exc in iter_error_chain(error):
        if status_of(exc) in (401, 403):
            return True
        if any(code in TERMINAL_AUTH_CODES for code in codes_of(exc)):
            return True
    return False


def _is_transient_here(error: BaseException) -> bool:
    if isinstance(error, ModelAPIError) and error.retryable:
        return True
    status = status_of(error)
    if status is not None and (status == 429 or 500 <= status <= 599):
        return True
    if is_connection_reset(error):
        return True
    if any(marker in code for code in codes_of(error) for marker in TRANSIENT_CODE_MARKERS):
        return True
    return any(_RETRY_HINT.search(text) for text in texts_of(error))


def is_transient_error(error: BaseException) -> bool:
    """A provider-flagged retryable error (`ModelAPIError.retryable`), HTTP 429 or
    5xx, a connection reset, a transient provider code, or a "you can retry your
    request" message, anywhere in the chain; never a terminal auth error."""
    if is_terminal_auth_error(error):
        return False
    return any(_is_transient_here(exc) for exc in iter_error_chain(error))


def _is_bad_request(error: BaseException) -> bool:
    return status_of(error) == 400


def retry_after_ms(error: BaseException) -> float | None:
    """The provider's Retry-After (ms) from the error details of the chain:
    `retry_after_ms`, or `retry-after` in seconds or as an HTTP date, at the top
    level of the details or under `headers`."""
    for exc in iter_error_chain(error):
        details = details_of(exc)
        for source in (details, details.get("headers")):
            if isinstance(source, Mapping):
                found = _retry_after_in(source)
                if found is not None:
                    return found
    return None


def _retry_after_in(source: Mapping[str, Any]) -> float | None:
    lowered = {str(k).lower(): v for k, v in source.items()}
    for key in _RETRY_AFTER_MS_KEYS:
        value = _number(lowered.get(key.lower()))
        if value is not None:
            return value
    for key in _RETRY_AFTER_S_KEYS:
        raw = lowered.get(key.lower())
        value = _number(raw)
        if value is not None:
            return value * 1000
        if isinstance(raw, str) and raw.strip():
            try:
                when = parsedate_to_datetime(raw)
            except (TypeError, ValueError, IndexError):
                continue
            if when.tzinfo is None:
                continue
            return max(0.0, (when - utcnow()).total_seconds() * 1000)
    return None


def _number(value: Any) -> float | None:
    """A finite, non-negative number from a number or a numeric string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def clamp_delay_ms(value: Any) -> float:
    """Negative, non-finite or non-numeric delays become 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0.0
    return float(value) if math.isfinite(value) and value > 0 else 0.0


# ---------------------------------------------------------------- the processor


def _check_max_retries(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _check_delay(value: Any, what: str) -> DelayMs:
    if callable(value):
        return value  # type: ignore[no-any-return]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number of milliseconds or a function, got {value!r}")
    return value


def _pattern_predicate(pattern: str | re.Pattern[str]) -> MatchFn:
    compiled = re.compile(pattern, re.IGNORECASE) if isinstance(pattern, str) else pattern

    def predicate(error: BaseException) -> bool:
        return any(compiled.search(text) for text in texts_of(error))

    return predicate


def _entry(matcher: Any, index: int) -> _Entry:
    if isinstance(matcher, Mapping):
        if "match" not in matcher:
            raise ValueError(f"matchers[{index}]: 'match' is required")
        matcher = dataclass_from_options(RetryMatcher, matcher, f"matchers[{index}]")
    elif callable(matcher) and not isinstance(matcher, RetryMatcher):
        matcher = RetryMatcher(match=matcher, name=getattr(matcher, "__name__", "matcher"))
    elif isinstance(matcher, (str, re.Pattern)):
        matcher = RetryMatcher(match=matcher)
    if not isinstance(matcher, RetryMatcher):
        raise ValueError(f"matchers[{index}] must be a function, a pattern, a dict or a RetryMatcher")
    match = matcher.match
    if isinstance(match, (str, re.Pattern)):
        predicate = _pattern_predicate(match)
    elif callable(match):
        predicate = match
    else:
        raise ValueError(f"matchers[{index}].match must be a function or a pattern")
    return _Entry(
        name=f"{matcher.name}[{index}]",
        predicate=predicate,
        max_retries=(None if matcher.max_retries is None else _check_max_retries(matcher.max_retries, "max_retries")),
        delay_ms=None if matcher.delay_ms is None else _check_delay(matcher.delay_ms, "delay_ms"),
        on_retry=matcher.on_retry,
    )


class StreamErrorRetryProcessor(Processor):
    """Retries transient provider and stream failures (see the module docstring).

    Options: `max_retries` (1), `matchers` (functions, patterns, dicts
    `{match, max_retries, delay_ms, on_retry}` or RetryMatcher), `retry_unknown_errors`
    (False), `delay_ms` (0; a number or a function of the args), `max_retry_after_ms`
    (30000), `retry_bad_requests` (False: opt-in HTTP 400 matcher, one retry),
    `on_retry` (called with the args and the delay before waiting).
    """

    id = STREAM_ERROR_RETRY_ID
    name = "Stream Error Retry Processor"

    def __init__(
        self,
        *,
        max_retries: int = 1,
        matchers: list[Any] | tuple[Any, ...] | None = None,
        retry_unknown_errors: bool = False,
        delay_ms: DelayMs = 0,
        max_retry_after_ms: float = 30_000,
        retry_bad_requests: bool = False,
        on_retry: OnRetry | None = None,
    ) -> None:
        self.max_retries = _check_max_retries(max_retries, "max_retries")
        self.delay_ms = _check_delay(delay_ms, "delay_ms")
        if (
            isinstance(max_retry_after_ms, bool)
            or not isinstance(max_retry_after_ms, (int, float))
            or math.isnan(max_retry_after_ms)
            or max_retry_after_ms < 0
        ):
            raise ValueError(f"max_retry_after_ms must be a non-negative number, got {max_retry_after_ms!r}")
        self.max_retry_after_ms = float(max_retry_after_ms)
        self.retry_unknown_errors = bool(retry_unknown_errors)
        self.retry_bad_requests = bool(retry_bad_requests)
        if on_retry is not None and not callable(on_retry):
            raise ValueError("on_retry must be a function")
        self.on_retry = on_retry
        if matchers is not None and not isinstance(matchers, (list, tuple)):
            raise ValueError("matchers must be a list")
        entries = [_entry(m, i) for i, m in enumerate(matchers or ())]
        if self.retry_bad_requests:
            entries.append(_Entry("bad-request", _is_bad_request, _BAD_REQUEST_MAX_RETRIES, None, None))
        self._entries: tuple[_Entry, ...] = tuple(entries)
        self._default = _Entry("default", lambda _e: True, None, None, None)

    # ------------------------------------------------------------ decision

    def _match_entry(self, entry: _Entry, error: BaseException) -> bool:
        try:
            return bool(entry.predicate(error))
        except Exception:
            log.warning("%s: matcher %s raised; treating it as no match", self.id, entry.name, exc_info=True)
            return False

    def policy_for(self, error: BaseException) -> _Entry | None:
        """The retry policy for `error`, or None when it is not retryable here."""
        terminal = is_terminal_auth_error(error)
        for exc in iter_error_chain(error):
            for entry in self._entries:
                if self._match_entry(entry, exc):
                    return entry
            if not terminal and _is_transient_here(exc):
                return self._default
        if self.retry_unknown_errors and not terminal:
            return self._default
        return None

    async def _delay_ms(self, policy: _Entry, args: ProcessAPIErrorArgs) -> float:
        configured: Any = policy.delay_ms if policy.delay_ms is not None else self.delay_ms
        if callable(configured):
            configured = configured(args)
            if inspect.isawaitable(configured):
                configured = await configured
        delay = clamp_delay_ms(configured)
        provider = retry_after_ms(args.error)
        if provider is not None:
            delay = max(delay, min(provider, self.max_retry_after_ms))
        return delay

    # ------------------------------------------------------------ hook

    async def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        policy = self.policy_for(args.error)
        if policy is None:
            return None
        limit = policy.max_retries if policy.max_retries is not None else self.max_retries
        if args.retry_count >= limit:
            return None
        if args.cancelled is not None and args.cancelled.is_set():
            return None
        delay = await self._delay_ms(policy, args)
        on_retry = policy.on_retry or self.on_retry
        if on_retry is not None:
            called = on_retry(args, delay)
            if inspect.isawaitable(called):
                await called
        if not await _wait(delay, args.cancelled):
            return None
        return APIErrorResult(retry=True)


async def _wait(delay_ms: float, cancelled: asyncio.Event | None) -> bool:
    """Waits `delay_ms`; False when `cancelled` got set first."""
    if cancelled is None:
        if delay_ms > 0:
            await asyncio.sleep(delay_ms / 1000)
        return True
    if cancelled.is_set():
        return False
    if delay_ms <= 0:
        return True
    try:
        await asyncio.wait_for(cancelled.wait(), timeout=delay_ms / 1000)
    except TimeoutError:
        return True
    return False
