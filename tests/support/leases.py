"""Waiting on a LeaseKeeper, for the lease tests on every coordination backend."""

from __future__ import annotations

import asyncio

from agentd.runtime.coordination import LeaseKeeper


async def wait_lost(keeper: LeaseKeeper, within: float) -> None:
    async with asyncio.timeout(within):
        await keeper.lost.wait()
