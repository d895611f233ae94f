"""The server's default deadline for unary calls that carry none of their own
([server] default_deadline_seconds)."""

from __future__ import annotations

import asyncio
from asyncio import current_task, get_running_loop
from time import monotonic

#: A call's wait under a `DefaultDeadline`: the task serving the call (one wait per task at a time).
Expiry = asyncio.Task[object]


class DefaultDeadline:
    """Cancels a call `seconds` after it began. Every call waits the same
    length, so calls expire in the order they began: one timer, armed for the
    oldest call still going, serves them all, where asyncio.timeout puts a
    timer of its own per call into the loop's heap (a few microseconds, and a
    heap that every loop turn looks at). A wait is its task, and what is
    kept of it a tuple: an object of its own per call cost as much again.
    Times are time.monotonic's, which asyncio's loop.time() calls from Python
    (the timer is armed with a delay, so any loop's clock will do)."""

    __slots__ = ("_calls", "_expired", "_loop", "_timer", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: The calls going, in the order they began (a dict: removal in O(1)):
        #: when each expires, and its task's pending cancellations when it
        #: began (one more is the deadline's).
        self._calls: dict[Expiry, tuple[float, int]] = {}
        #: Calls the deadline cancelled that have not ended: their pending cancellations when they began.
        self._expired: dict[Expiry, int] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> Expiry:
        """The current task's wait; `end` it however the call ends."""
        loop = get_running_loop()
        task = current_task(loop)
        assert task is not None
        self._calls[task] = (monotonic() + self.seconds, task.cancelling())
        if self._timer is None or self._loop is not loop:
            self._loop = loop
            self._timer = loop.call_later(self.seconds, self._expire)
        return task

    def end(self, expiry: Expiry) -> bool:
        """Ends the wait (again: no effect, and False); True when the deadline
        is what cancelled the call, its cancellation then taken back (as asyncio.timeout does)."""
        if self._calls.pop(expiry, None) is not None:
            return False
        cancelling = self._expired.pop(expiry, None)
        return cancelling is not None and expiry.uncancel() <= cancelling

    def _expire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = monotonic()
        calls = self._calls
        while calls:
            task = next(iter(calls))
            when, cancelling = calls[task]
            if when > now:
                self._timer = loop.call_later(when - now, self._expire)
                return
            del calls[task]
            self._expired[task] = cancelling
            task.cancel()
