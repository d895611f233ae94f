"""Thread leases: which replica (and which run on it) may drive a thread.

A lease is a key per thread holding its owner's token, with an expiry. Exactly
one owner holds a thread's lease at a time; every change but `acquire` checks
the caller's token first, so a run that lost its lease (it expired, someone
took it) can never extend, release or hand on someone else's.

    acquire(thread, owner, ttl_ms)             only when nobody else holds it
    renew(thread, owner, ttl_ms)               a fresh ttl, when `owner` holds it
    release(thread, owner)                     gone, when `owner` holds it
    transfer(thread, owner, new_owner, ttl_ms) to the next run, with a fresh ttl
    owner(thread)                              the holder's token, or None
    owners(threads)                            the same for several, at once

Backends: `LocalCoordination` (here: one process, the default) and
`agentd.backends.redis_coordination.RedisCoordination` (several replicas on one
Redis). Both expire a lease `ttl_ms` after it was last set, on a monotonic clock.

`LeaseKeeper` holds a lease for an `async with` block, renewing it every third
of its TTL; its `lost` event is set when a renewal is refused (or cannot be
confirmed before the lease would expire), and the holder must then stop.

Owner tokens must be unique per holder, e.g. "<replica id>:<run id>".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType

__all__ = [
    "DEFAULT_LEASE_TTL_MS",
    "Coordination",
    "CoordinationError",
    "LeaseKeeper",
    "LeaseUnavailable",
    "LocalCoordination",
    "check_lease_args",
]

log = logging.getLogger(__name__)

#: How long a lease lives without a renewal.
DEFAULT_LEASE_TTL_MS = 15_000

Clock = Callable[[], float]


class CoordinationError(Exception):
    """The backend failed (unreachable, timed out, a command error): the answer is unknown."""


class LeaseUnavailable(Exception):
    """LeaseKeeper could not take (or confirm) the lease: another owner holds it."""

    def __init__(self, thread_id: str, owner: str, holder: str | None) -> None:
        self.thread_id = thread_id
        self.owner = owner
        self.holder = holder
        held = f"held by {holder!r}" if holder is not None else "not held by it"
        super().__init__(f"thread {thread_id!r}: lease unavailable to {owner!r} ({held})")


def check_lease_args(thread_id: str, owner: str, ttl_ms: int | None = None) -> None:
    """ValueError for an empty thread id or owner, or a ttl that is not a positive int."""
    if not thread_id:
        raise ValueError("thread_id must be a non-empty string")
    if not owner:
        raise ValueError("owner must be a non-empty string")
    if ttl_ms is not None and (isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int) or ttl_ms <= 0):
        raise ValueError(f"ttl_ms must be a positive whole number of milliseconds, not {ttl_ms!r}")


class Coordination(ABC):
    """Thread leases. Every method but `owner` is atomic; the owner-checked ones
    return False (and change nothing) when `owner` does not hold the lease.
    Backend failures raise CoordinationError."""

    #: "local" or "redis".
    backend: str = ""
    #: Coordinates several processes (replicas), so what they share must be shared too.
    shared: bool = False

    @abstractmethod
    async def acquire(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        """Takes the lease for `ttl_ms` when nobody holds it; False when another owner does.

        Idempotent for `owner`: True, expiry unchanged, when `owner` already holds it
        (tokens are unique per holder, so that is a retry whose first reply was lost)."""

    @abstractmethod
    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        """Resets the lease's expiry to `ttl_ms` from now, when `owner` holds it."""

    @abstractmethod
    async def release(self, thread_id: str, owner: str) -> bool:
        """Drops the lease, when `owner` holds it."""

    @abstractmethod
    async def transfer(self, thread_id: str, owner: str, new_owner: str, ttl_ms: int) -> bool:
        """Hands the lease to `new_owner` with a fresh `ttl_ms`, when `owner` holds it
        (a run that ends with queued work passes the thread to the next run)."""

    @abstractmethod
    async def owner(self, thread_id: str) -> str | None:
        """The holder's token, or None when the lease is free (or expired)."""

    async def owners(self, thread_ids: Sequence[str]) -> dict[str, str | None]:
        """`owner` of several threads (backends answer in one round trip)."""
        return {thread_id: await self.owner(thread_id) for thread_id in thread_ids}

    async def close(self) -> None:
        """Releases the backend's resources (connections); leases are left to expire."""
        return None


@dataclass
class _Lease:
    """A lease held in this process: its owner and expiry."""

    owner: str
    expires_at: float


class LocalCoordination(Coordination):
    """Leases in this process: the default for one replica. `clock` (seconds,
    monotonic) is injectable so tests can expire leases without sleeping."""

    backend = "local"

    def __init__(self, *, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self._leases: dict[str, _Lease] = {}

    def __repr__(self) -> str:
        return f"LocalCoordination(leases={len(self._leases)})"

    def _live(self, thread_id: str) -> _Lease | None:
        lease = self._leases.get(thread_id)
        if lease is not None and lease.expires_at <= self.clock():
            del self._leases[thread_id]
            return None
        return lease

    def _held(self, thread_id: str, owner: str) -> _Lease | None:
        lease = self._live(thread_id)
        return lease if lease is not None and lease.owner == owner else None

    def _expiry(self, ttl_ms: int) -> float:
        return self.clock() + ttl_ms / 1000

    # No awaits below: each method runs to completion on the event loop, so each is atomic.

    async def acquire(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        lease = self._live(thread_id)
        if lease is not None:
            return lease.owner == owner
        self._leases[thread_id] = _Lease(owner, self._expiry(ttl_ms))
        return True

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        lease = self._held(thread_id, owner)
        if lease is None:
            return False
        lease.expires_at = self._expiry(ttl_ms)
        return True

    async def release(self, thread_id: str, owner: str) -> bool:
        check_lease_args(thread_id, owner)
        if self._held(thread_id, owner) is None:
            return False
        del self._leases[thread_id]
        return True

    async def transfer(self, thread_id: str, owner: str, new_owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        check_lease_args(thread_id, new_owner)
        if self._held(thread_id, owner) is None:
            return False
        self._leases[thread_id] = _Lease(new_owner, self._expiry(ttl_ms))
        return True

    async def owner(self, thread_id: str) -> str | None:
        if not thread_id:
            raise ValueError("thread_id must be a non-empty string")
        lease = self._live(thread_id)
        return None if lease is None else lease.owner


class LeaseKeeper:
    """Holds a thread's lease for an `async with` block:

        async with LeaseKeeper(coordination, thread_id, owner) as keeper:
            ...  # stop as soon as keeper.lost is set

    On entry it acquires the lease (`adopt=True`: confirms, by renewing, a lease
    already handed to `owner` by `transfer`), raising LeaseUnavailable when it
    cannot. While inside, it renews every `renew_interval_ms` (a third of the
    TTL by default). `lost` is set when a renewal is refused, or when backend
    errors (or a renewal hanging) leave less than a tenth of the TTL before the
    lease would expire unconfirmed; the keeper then stops renewing. On exit it
    stops renewing and releases the lease (owner-checked), unless it was handed
    on with `transfer`. A release that fails is logged; the lease then expires.
    """

    def __init__(
        self,
        coordination: Coordination,
        thread_id: str,
        owner: str,
        ttl_ms: int = DEFAULT_LEASE_TTL_MS,
        *,
        adopt: bool = False,
        renew_interval_ms: int | None = None,
    ) -> None:
        check_lease_args(thread_id, owner, ttl_ms)
        interval = max(1, ttl_ms // 3) if renew_interval_ms is None else renew_interval_ms
        if interval <= 0:
            raise ValueError(f"renew_interval_ms must be positive, not {renew_interval_ms!r}")
        self.coordination = coordination
        self.thread_id = thread_id
        self.owner = owner
        self.ttl_ms = ttl_ms
        self.adopt = adopt
        self.renew_interval = interval / 1000
        #: Set when the lease is no longer ours: stop touching the thread.
        self.lost = asyncio.Event()
        #: Successful renewals so far.
        self.renewals = 0
        self._ttl = ttl_ms / 1000
        self._margin = self._ttl / 10
        self._expires_at = 0.0
        self._task: asyncio.Task[None] | None = None
        self._handed_on = False
        self._stopping = False
        self._renewing = False

    def __repr__(self) -> str:
        state = "lost" if self.lost.is_set() else "held" if self._task is not None else "idle"
        return f"LeaseKeeper(thread_id={self.thread_id!r}, owner={self.owner!r}, ttl_ms={self.ttl_ms}, {state})"

    @property
    def held(self) -> bool:
        """Inside the block, not lost and not handed on."""
        return self._task is not None and not self.lost.is_set() and not self._handed_on

    async def __aenter__(self) -> LeaseKeeper:
        if self._task is not None:
            raise RuntimeError("LeaseKeeper is not re-entrant")
        loop = asyncio.get_running_loop()
        sent = loop.time()
        if self.adopt:
            ok = await self.coordination.renew(self.thread_id, self.owner, self.ttl_ms)
        else:
            ok = await self.coordination.acquire(self.thread_id, self.owner, self.ttl_ms)
        if not ok:
            raise LeaseUnavailable(self.thread_id, self.owner, await self._holder())
        self._expires_at = sent + self._ttl
        self.lost.clear()
        self._handed_on = False
        self._stopping = False
        self._task = asyncio.create_task(self._keep(), name=f"lease-keeper:{self.thread_id}")
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self._stop()
        self._task = None
        if self._handed_on or self.lost.is_set():
            return
        try:
            await self.coordination.release(self.thread_id, self.owner)
        except (CoordinationError, OSError) as error:
            log.warning(
                "thread %s: releasing lease of %s failed (it will expire): %s", self.thread_id, self.owner, error
            )

    async def transfer(self, new_owner: str, ttl_ms: int | None = None) -> bool:
        """Hands the lease to `new_owner` (fresh `ttl_ms`, default this keeper's)
        and stops renewing; the block's exit then leaves it alone. False (and
        `lost` set) when the lease was no longer ours."""
        if self._task is None:
            raise RuntimeError("LeaseKeeper.transfer: not inside the async with block")
        if self.lost.is_set() or self._handed_on:
            return False
        await self._stop()
        ok = await self.coordination.transfer(
            self.thread_id, self.owner, new_owner, self.ttl_ms if ttl_ms is None else ttl_ms
        )
        if ok:
            self._handed_on = True
        else:
            self.lost.set()
        return ok

    async def _holder(self) -> str | None:
        try:
            return await self.coordination.owner(self.thread_id)
        except CoordinationError:
            return None

    async def _stop(self) -> None:
        # The flag, not only the cancel: on Python 3.11 a cancel that lands while
        # redis-py is inside asyncio.wait_for (its socket writes) can be swallowed,
        # and the renewal loop would go on for ever.
        self._stopping = True
        task = self._task
        if task is None or task.done():
            return
        if self._renewing:
            # Let a renewal in flight finish (bounded by the lease's expiry): a
            # Redis command cancelled while it connects leaks its connection.
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), self._ttl)
            if task.done():
                return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # we are being cancelled ourselves, not just the renewal task

    async def _keep(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.renew_interval
        while True:
            await asyncio.sleep(delay)
            if self._stopping:
                return
            sent = loop.time()
            remaining = self._expires_at - sent
            self._renewing = True
            try:
                # A renewal still pending when the lease would expire is as good as refused.
                async with asyncio.timeout(max(remaining, 0.0)):
                    ok = await self.coordination.renew(self.thread_id, self.owner, self.ttl_ms)
            except Exception as error:  # CoordinationError, a timeout, or anything else: unconfirmed
                self._renewing = False
                if self._stopping:
                    return
                remaining = self._expires_at - loop.time()
                if remaining <= self._margin:
                    log.warning("thread %s: lease of %s could not be renewed: %s", self.thread_id, self.owner, error)
                    self.lost.set()
                    return
                log.info("thread %s: lease renewal failed, retrying: %s", self.thread_id, error)
                delay = min(self.renew_interval, remaining - self._margin)
                continue
            self._renewing = False
            if self._stopping:
                return
            if not ok:
                log.warning("thread %s: lease of %s was lost", self.thread_id, self.owner)
                self.lost.set()
                return
            self.renewals += 1
            self._expires_at = sent + self._ttl
            delay = self.renew_interval
