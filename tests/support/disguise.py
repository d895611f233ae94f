"""A cancellation in disguise: where a test's run (or task) waits until it is
cancelled and then raises an error of its own instead, as cleanup that fails
or a client library that wraps the cancellation does."""

from __future__ import annotations

import asyncio
from typing import Any


class Disguise:
    """Where a run waits, the first time, until it is cancelled, and then raises
    `error` instead of the cancellation. Later waits return at once."""

    def __init__(self, error: Exception | None = None) -> None:
        self.waiting = asyncio.Event()
        #: Set as it raises `error` in place of the cancellation.
        self.raised = asyncio.Event()
        self.error = error if error is not None else RuntimeError("cleanup failed while cancelled")

    async def wait(self, *_: Any) -> None:
        if self.waiting.is_set():
            return
        self.waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.raised.set()
            raise self.error from None
