"""A per-test timeout that works on uvloop, and says where a hung test waits.

pytest-timeout's signal method cannot end a test whose event loop is idle on
uvloop: libuv retries the interrupted epoll_wait without running Python, so
the SIGALRM handler never runs and the session hangs until CI gives up. This
timer runs on a thread instead. When a test overruns it prints every task of
the test's loop with the stack it waits in, then cancels them so the test
fails and the session goes on; if the loop does not answer within
`GRACE_SECONDS`, pytest-timeout's thread method dumps the threads and ends the
process (a failed run rather than a hung one)."""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest
import pytest_timeout

#: How long the loop has to dump and cancel its tasks, and the test to end after.
GRACE_SECONDS = 30.0

_loops: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


def watched(factory: Callable[[], asyncio.AbstractEventLoop]) -> Callable[[], asyncio.AbstractEventLoop]:
    """Wraps an event loop factory so the watchdog can reach the loops it makes."""

    def make() -> asyncio.AbstractEventLoop:
        loop = factory()
        _loops.add(loop)
        return loop

    return make


def _describe(tasks: set[asyncio.Task[Any]]) -> str:
    out = io.StringIO()
    out.write(f"{len(tasks)} tasks on the test's loop:\n")
    for task in tasks:
        task.print_stack(limit=30, file=out)
    return out.getvalue()


def _expired(item: pytest.Item, settings: Any, finished: threading.Event) -> None:
    loops = [loop for loop in list(_loops) if loop.is_running()]
    report = [f"\n+++ watchdog: {item.nodeid} still running after {settings.timeout:g}s +++\n"]
    answered = threading.Event()

    def dump_and_cancel(loop: asyncio.AbstractEventLoop) -> None:
        tasks = asyncio.all_tasks(loop)
        report.append(_describe(tasks))
        for task in tasks:
            task.cancel()
        answered.set()

    for loop in loops:
        loop.call_soon_threadsafe(dump_and_cancel, loop)
    if not loops:
        report.append("no event loop is running (a sync test, or a fixture's)\n")
    elif not answered.wait(GRACE_SECONDS):
        report.append(f"the loop did not answer within {GRACE_SECONDS:g}s\n")
    else:
        sys.stderr.write("".join(report))
        sys.stderr.flush()
        if finished.wait(GRACE_SECONDS):
            return
        report = [f"{item.nodeid} did not end within {GRACE_SECONDS:g}s of its tasks being cancelled\n"]
    sys.stderr.write("".join(report))
    pytest_timeout.timeout_timer(item, settings)  # dumps every thread, then os._exit(1)


@pytest.hookimpl(tryfirst=True)
def timeout_timer(item: pytest.Item, settings: Any) -> bool:
    finished = threading.Event()
    timer = threading.Timer(settings.timeout, _expired, (item, settings, finished))
    timer.name = f"watchdog {item.nodeid}"
    timer.daemon = True

    def cancel() -> None:
        finished.set()
        timer.cancel()

    item.cancel_timeout = cancel  # type: ignore[attr-defined]  # where pytest-timeout looks
    timer.start()
    return True
