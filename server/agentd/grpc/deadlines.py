"""The server's default deadline for unary calls that carry none of their own
([server] default_deadline_seconds)."""

from __future__ import annotations

import asyncio


class Expiry:
    """One call's wait under a `DefaultDeadline`."""

    __slots__ = ("cancelling", "ended", "expired", "ours", "task", "when")

    def __init__(self, when: float, task: asyncio.Task[object]) -> None:
        self.when = when
        self.task = task
        #: The task's pending cancellations when the wait began: one more is the deadline's.
        self.cancelling = task.cancelling()
        #: The deadline passed and cancelled the task.
        self.expired = False
        self.ended = False
        #: The deadline, not someone else, is why the task was cancelled.
        self.ours = False


class DefaultDeadline:
    """Cancels a call `seconds` after it began. Every call waits the same
    length, so calls expire in the order they began: one timer, armed for the
    oldest call still going, serves them all, where asyncio.timeout puts a
    timer of its own per call into the loop's heap (a few microseconds, and a
    heap that every loop turn looks at)."""

    __slots__ = ("_calls", "_loop", "_timer", "seconds")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        #: The calls going, in the order they began (a dict: removal in O(1)).
        self._calls: dict[Expiry, None] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> Expiry:
        """The current task's wait; `end` it however the call ends."""
        loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None
        expiry = Expiry(loop.time() + self.seconds, task)
        self._calls[expiry] = None
        if self._timer is None or self._loop is not loop:
            self._loop = loop
            self._timer = loop.call_at(expiry.when, self._expire)
        return expiry

    def end(self, expiry: Expiry) -> bool:
        """Ends the wait (again: no effect); True when the deadline is what
        cancelled the call, its cancellation then taken back (as asyncio.timeout does)."""
        if not expiry.expired:
            self._calls.pop(expiry, None)
            return False
        if not expiry.ended:
            expiry.ended = True
            expiry.ours = expiry.task.uncancel() <= expiry.cancelling
        return expiry.ours

    def _expire(self) -> None:
        self._timer = None
        loop = self._loop
        assert loop is not None
        now = loop.time()
        while self._calls:
            expiry = next(iter(self._calls))
            if expiry.when > now:
                self._timer = loop.call_at(expiry.when, self._expire)
                return
            del self._calls[expiry]
            expiry.expired = True
            expiry.task.cancel()
