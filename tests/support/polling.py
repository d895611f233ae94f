"""Polling for what another task, thread or process makes true: the one way the
tests wait without an event to await. A bound, never a fixed sleep; a failure
names what was awaited and the last value seen."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")


@overload
async def until(
    check: Callable[[], Awaitable[T]],
    *,
    what: str,
    holds: Callable[[T], object] = ...,
    within: float = ...,
    step: float = ...,
) -> T: ...


@overload
async def until(
    check: Callable[[], T],
    *,
    what: str,
    holds: Callable[[T], object] = ...,
    within: float = ...,
    step: float = ...,
) -> T: ...


async def until(
    check: Callable[[], Any],
    *,
    what: str,
    holds: Callable[[Any], object] = bool,
    within: float = 10.0,
    step: float = 0.02,
) -> Any:
    """Calls `check` (sync or async) every `step` seconds until `holds` its value
    (by default: until the value is truthy), and returns that value;
    AssertionError after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if inspect.isawaitable(value):
            value = await value
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(timed_out(what, within, value))
        await asyncio.sleep(step)


def until_sync(
    check: Callable[[], T],
    *,
    what: str,
    holds: Callable[[T], object] = bool,
    within: float = 10.0,
    step: float = 0.05,
) -> T:
    """`until` for a test without an event loop (it blocks the thread between calls)."""
    deadline = time.monotonic() + within
    while True:
        value = check()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(timed_out(what, within, value))
        time.sleep(step)


def timed_out(what: str, within: float, value: object) -> str:
    shown = repr(value)
    return f"timed out after {within:g}s waiting for {what}; last seen: {shown[:2000]}"
