"""A run's work for after it: the `on_finish` callbacks its processors
registered, run once the run has its result (or ended otherwise).

That work runs in a task of its own, which the run waits for. A
cancellation of the run's task while it waits (a Generate's caller gone, or
its deadline: that run runs in its call's task) leaves the work running to
its end, as a Stream's does when its caller leaves. Only the server's own
endings (`RunHandle.stop`: shutdown past its grace, a lost lease, a deleted
thread, which set `RunState.stopping`) cut it short, and its time limit
(`RunState.on_finish_timeout`): a callback that never returns would hold a
thread's run, and with it the thread, for ever."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from agentd.runtime.agent_definition import maybe_await
from agentd.runtime.cancellation import cancelling, raise_if_cancelling
from agentd.runtime.loop.state import RunState

log = logging.getLogger("agentd.run")


async def run_after(callbacks: list[Callable[[], Any]], state: RunState) -> None:
    """Runs `callbacks` in order, waiting for them as the run's ending does."""
    work = asyncio.ensure_future(_each(callbacks, state.run_id, state.on_finish_timeout))
    while True:
        try:
            await asyncio.shield(work)
            return
        except asyncio.CancelledError:
            if not state.stopping:
                continue  # the caller is gone: the work is not the caller's to cut short
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
            return


async def _each(callbacks: list[Callable[[], Any]], run_id: str, limit: float) -> None:
    try:
        async with asyncio.timeout(limit):
            for callback in callbacks:
                if cancelling():  # a callback swallowed the cancellation: the rest is cut short all the same
                    raise asyncio.CancelledError
                try:
                    await maybe_await(callback())
                except Exception as error:
                    # (This task's own count: a cancellation here is the limit's or the server's stop.)
                    raise_if_cancelling(error)
                    log.exception("an on_finish callback of run %s failed; ignored", run_id)
    except TimeoutError:
        log.warning(
            "the on_finish callbacks of run %s took longer than %g s ([server] on_finish_timeout_seconds); "
            "the rest are skipped",
            run_id,
            limit,
        )
    except asyncio.CancelledError:
        # Stopped by the server: the rest of this work is cut short, not the
        # ending (the stream still closes, the result stands).
        log.warning("the on_finish callbacks of run %s were cancelled; the rest are skipped", run_id)
