"""Running branches side by side, as both kinds of workflow do (processor
workflows' parallel steps, tool workflows' parallel and branch steps)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar, cast

T = TypeVar("T")


async def run_all(branches: Sequence[Awaitable[T]], on_other_failure: Callable[[int, BaseException], None]) -> list[T]:
    """Runs `branches` concurrently, each to its end: one that fails does not
    cancel its siblings (as in the reference's parallel step, where every
    branch finishes before the step's status is decided). Then the first
    branch in declaration order that raised decides, whichever finished first:
    its exception propagates, and each later failure goes to `on_other_failure`
    with its branch's index. Cancelling the caller cancels every branch."""
    outcomes = await asyncio.gather(*branches, return_exceptions=True)
    failures = [(i, o) for i, o in enumerate(outcomes) if isinstance(o, BaseException)]
    if failures:
        for index, error in failures[1:]:
            on_other_failure(index, error)
        raise failures[0][1]
    return cast(list[T], outcomes)
