"""Running branches side by side, as both kinds of workflow do (processor
workflows' parallel steps, tool workflows' parallel and branch steps), and
work that must not stop halfway because its caller left."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar, cast

T = TypeVar("T")
log = logging.getLogger("agentd.concurrency")
#: Work its callers left, until it ends (the loop keeps only weak references to tasks).
_LEFT: set[asyncio.Task[Any]] = set()


async def to_its_end(work: Coroutine[Any, Any, T], what: str) -> T:
    """Awaits `work` in a task of its own that runs to its end even when the
    caller is cancelled (a deadline, a client that gave up): work that writes
    several records in turn must not leave them half-done. A failure after
    the caller left is logged under `what`, since no one else will see it."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        if not task.done():
            _LEFT.add(task)
            task.add_done_callback(lambda done: _ended_alone(done, what))
        raise


def _ended_alone(task: asyncio.Task[Any], what: str) -> None:
    _LEFT.discard(task)
    if not task.cancelled() and task.exception() is not None:
        log.error("%s failed after its caller left", what, exc_info=task.exception())


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
