"""LocalCoordination, the single-process lease backend: expiry on its injected
clock, and a LeaseKeeper over a local backend that fails, hangs or swallows a
cancel. The suite every backend passes is tests/redis/test_coordination.py.

Timing: TTLs are a few hundred milliseconds and no test waits much longer than
a few times the TTL it configures.
"""

from __future__ import annotations

import asyncio

import pytest

from agentd.runtime.coordination import DEFAULT_LEASE_TTL_MS, CoordinationError, LeaseKeeper, LocalCoordination
from support.clocks import Clock
from support.leases import wait_lost


async def test_local_expiry_follows_the_injected_clock() -> None:
    clock = Clock()
    coordination = LocalCoordination(clock=clock)
    assert await coordination.acquire("t", "a", 1_000)
    clock.advance(0.999)
    assert await coordination.owner("t") == "a"
    assert await coordination.renew("t", "a", 1_000)
    clock.advance(0.999)
    assert await coordination.owner("t") == "a"
    clock.advance(0.001)  # expiry is exclusive, as on Redis
    assert await coordination.owner("t") is None
    assert not await coordination.renew("t", "a", 1_000)
    assert await coordination.acquire("t", "b", 1_000)
    assert await coordination.transfer("t", "b", "c", 5_000)
    clock.advance(4.5)
    assert await coordination.owner("t") == "c"
    assert coordination.backend == "local"
    await coordination.close()


def test_default_ttl() -> None:
    assert DEFAULT_LEASE_TTL_MS == 15_000
    keeper = LeaseKeeper(LocalCoordination(), "t", "a")
    assert keeper.ttl_ms == DEFAULT_LEASE_TTL_MS
    assert keeper.renew_interval == pytest.approx(5.0)
    with pytest.raises(ValueError, match="renew_interval_ms"):
        LeaseKeeper(LocalCoordination(), "t", "a", renew_interval_ms=0)


class Flaky(LocalCoordination):
    """Renewals fail with CoordinationError while `failing`."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = False
        self.failures = 0

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        if self.failing:
            self.failures += 1
            raise CoordinationError("redis is down")
        return await super().renew(thread_id, owner, ttl_ms)


async def test_keeper_rides_out_a_brief_backend_failure() -> None:
    coordination = Flaky()
    async with LeaseKeeper(coordination, "t", "a", ttl_ms=300) as keeper:
        await asyncio.sleep(0.05)
        coordination.failing = True
        await asyncio.sleep(0.1)  # one renewal fails; the lease has not expired yet
        assert coordination.failures >= 1
        coordination.failing = False
        await asyncio.sleep(0.4)
        assert not keeper.lost.is_set()
        assert await coordination.owner("t") == "a"
    assert await coordination.owner("t") is None


async def test_keeper_is_lost_before_an_unconfirmed_lease_expires() -> None:
    coordination = Flaky()
    async with LeaseKeeper(coordination, "t", "a", ttl_ms=300) as keeper:
        coordination.failing = True
        await wait_lost(keeper, within=5)
        # Given up with a margin: the lease has not run out unrenewed yet (it is
        # still held), but the keeper no longer trusts it.
        assert await coordination.owner("t") == "a"
        assert coordination.failures >= 2
    assert await coordination.owner("t") == "a"  # a lost keeper does not release: the lease expires
    await asyncio.sleep(0.3)
    assert await coordination.owner("t") is None


class Hanging(LocalCoordination):
    """Renewals never answer."""

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_keeper_is_lost_when_a_renewal_hangs() -> None:
    async with LeaseKeeper(Hanging(), "t", "a", ttl_ms=300) as keeper:
        await wait_lost(keeper, within=0.5)


class Swallowing(LocalCoordination):
    """A renewal that swallows its cancellation, as redis-py's writes through
    asyncio.wait_for can on Python 3.11 (the cancel lands as the write completes)."""

    def __init__(self) -> None:
        super().__init__()
        self.renewing = asyncio.Event()

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        self.renewing.set()
        try:
            await asyncio.sleep(0.1)
        except asyncio.CancelledError:
            pass
        return await super().renew(thread_id, owner, ttl_ms)


async def test_keeper_exits_even_when_a_renewal_swallows_the_cancel() -> None:
    coordination = Swallowing()
    async with asyncio.timeout(1.0):  # before the fix this exit never returned
        async with LeaseKeeper(coordination, "t", "a", ttl_ms=300):
            await coordination.renewing.wait()
    assert await coordination.owner("t") is None
