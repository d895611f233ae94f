"""The server's default deadline: one timer for every call that carries none."""

from __future__ import annotations

import asyncio

import pytest

from agentd.grpc.deadlines import DefaultDeadline


class Late(Exception):
    pass


async def call(deadline: DefaultDeadline, work: asyncio.Future[None]) -> str:
    """What the unary wrapper does around a handler."""
    expiry = deadline.start()
    try:
        await work
        return "answered"
    except asyncio.CancelledError:
        if deadline.end(expiry):
            raise Late from None
        raise
    finally:
        deadline.end(expiry)


async def test_calls_past_the_deadline_end_in_the_order_they_began_and_quick_ones_answer() -> None:
    loop = asyncio.get_running_loop()
    deadline = DefaultDeadline(0.05)
    quick = loop.create_future()
    first = asyncio.ensure_future(call(deadline, quick))
    slow = [asyncio.ensure_future(call(deadline, loop.create_future())) for _ in range(3)]
    await asyncio.sleep(0)
    quick.set_result(None)
    assert await first == "answered"
    for task in slow:
        with pytest.raises(Late):
            await task
    # Idle, then used again: the timer is armed anew.
    again = asyncio.ensure_future(call(deadline, loop.create_future()))
    with pytest.raises(Late):
        await again
    assert not deadline._calls


async def test_a_call_cancelled_by_someone_else_stays_cancelled() -> None:
    loop = asyncio.get_running_loop()
    deadline = DefaultDeadline(30)
    task = asyncio.ensure_future(call(deadline, loop.create_future()))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not deadline._calls  # nothing kept for a call that ended


async def test_cancelled_by_someone_else_as_well_as_by_the_deadline_is_a_cancellation() -> None:
    loop = asyncio.get_running_loop()
    deadline = DefaultDeadline(0.01)
    work: asyncio.Future[None] = loop.create_future()

    async def caller() -> str:
        expiry = deadline.start()
        try:
            try:
                await work
            except asyncio.CancelledError:
                asyncio.current_task().cancel()  # type: ignore[union-attr]  # someone else cancels too
                await asyncio.sleep(0)
            return "unreachable"
        except asyncio.CancelledError:
            if deadline.end(expiry):
                raise Late from None
            raise
        finally:
            deadline.end(expiry)

    task = asyncio.ensure_future(caller())
    with pytest.raises(asyncio.CancelledError):
        await task
