"""LeasedOwnership: each thread under a lease that several replicas on one
Redis share (Coordination), with requests to the holder over Cluster.

- **Leases.** A run starts only under its thread's lease (owner token
  "<replica id>/<run id>", renewed by a LeaseKeeper). A run that ends with
  queued work hands the lease to the next run; otherwise it releases it. A run
  whose lease is lost is aborted (LEASE_LOST): another replica may own the
  thread now.
- **Forwarding.** A signal, abort or tool result for a thread whose lease
  another replica holds is sent to that replica, and its answer is the caller's.
- **Takeover.** Each replica sweeps for threads whose lease is free but which
  still have a run marked in flight (its replica died: the run gets an abort
  chunk, REPLICA_LOST) or acknowledged signals pending (they are replayed, in
  order, one run at a time). The sweep takes the lease first, so a thread is
  never taken over twice.
- **Retries.** A retried request (same signal id and target) gets the first
  answer, on whichever replica it lands: the first copy claims the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentd.runtime.chunks import TERMINAL_TYPES, Abort, Chunk
from agentd.runtime.cluster import Cluster, ClusterError, PeerGone, PeerTimeout, RunMarker
from agentd.runtime.coordination import Coordination, CoordinationError, LeaseKeeper, LeaseUnavailable
from agentd.runtime.errors import BACKEND_RETRY_SECONDS, FailedPrecondition, Unavailable
from agentd.runtime.lazy import lazy
from agentd.runtime.threads.ownership import Holder, ThreadHost, ThreadOwnership
from agentd.runtime.threads.routing import Routing, thread_busy
from agentd.runtime.threads.settings import ThreadSettings
from agentd.runtime.threads.shared_log import cluster_unavailable
from agentd.runtime.threads.state import LiveThread

if TYPE_CHECKING:
    from agentd.runtime.run import RunHandle
    from agentd.runtime.threads import peers
    from agentd.runtime.threads.peers import PeerAnswer, PeerRequest
else:
    peers = lazy("agentd.runtime.threads.peers")  # replicas only: loaded by the first LeasedOwnership

__all__ = ["LeasedOwnership"]

log = logging.getLogger("agentd.replicas")

#: A lease token's run part for a replica that holds a thread only to take it over.
_CLAIM = "~claim-"
#: How long a routing answer is kept for retries of its request.
_ANSWER_TTL_MS = 10 * 60 * 1000


def _coordination_unavailable(error: Exception) -> Unavailable:
    return Unavailable(
        f"thread leases are unavailable: {error}", "COORDINATION_UNAVAILABLE", retry_after=BACKEND_RETRY_SECONDS
    )


def _holder_of(token: str) -> Holder:
    replica, _, run = token.partition("/")
    return Holder(replica, "" if run.startswith(_CLAIM) else run)


@dataclass
class _Lease:
    keeper: LeaseKeeper
    #: The run the lease names (a claim's id while taking the thread over).
    run_id: str


class LeasedOwnership(ThreadOwnership):
    def __init__(self, coordination: Coordination, cluster: Cluster, settings: ThreadSettings) -> None:
        peers.register_messages()  # before the cluster carries any
        self.coordination = coordination
        self.cluster = cluster
        self.settings = settings
        self.patience = 2 * settings.lease_ttl + 2.0
        self.poll_interval = settings.sweep_every / 4
        #: The leases this process holds, by thread id.
        self._leases: dict[str, _Lease] = {}
        self._host: ThreadHost | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._wake_sweeper = asyncio.Event()
        self._closed = False
        self._background: set[asyncio.Task[Any]] = set()

    def __repr__(self) -> str:
        return f"LeasedOwnership(replica_id={self.replica_id!r}, leases={len(self._leases)})"

    @property
    def replica_id(self) -> str:  # type: ignore[override]
        return self.cluster.replica_id

    @property
    def host(self) -> ThreadHost:
        assert self._host is not None, "LeasedOwnership.start() first"
        return self._host

    def _token(self, run_id: str) -> str:
        return f"{self.replica_id}/{run_id}"

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> None:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------ lifecycle

    async def start(self, host: ThreadHost) -> int:
        """Starts answering other replicas and sweeping; takes over what a dead
        replica (or this one, before a restart) left."""
        self._host = host
        try:
            await self.cluster.serve(host.answer_peer)
        except ClusterError as exc:
            raise cluster_unavailable(exc) from exc
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever(), name="replica sweeper")
        return await self.sweep()

    async def close(self) -> None:
        # The sweeper stops between sweeps (a Redis command cut off mid-connect
        # would leave its connection outside the pool); the rest is cancelled.
        self._closed = True
        if self._sweeper is not None:
            self._wake_sweeper.set()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._sweeper, 2.0)
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    # ------------------------------------------------------------ runs under the lease

    def current_run(self, thread_id: str) -> str | None:
        lease = self._leases.get(thread_id)
        return lease.run_id if lease is not None else None

    async def begin(self, state: LiveThread, marker: RunMarker) -> None:
        lease = self._leases.get(state.thread_id)
        if lease is None or lease.run_id != marker.run_id:
            if lease is not None and lease.keeper.held:
                # Mid-hand-over, or held for a takeover (a claim names no run).
                raise thread_busy(state.thread_id, _holder_of(self._token(lease.run_id)).run_id)
            await self._take(state, marker.run_id)
        try:
            await self.cluster.mark_running(marker)
        except ClusterError as exc:
            await self.abandon(state, marker.run_id)
            raise cluster_unavailable(exc) from exc

    async def _take(self, state: LiveThread, run_id: str, *, wait_for_claims: bool = True) -> None:
        """Takes the thread's lease for `run_id`. A lease held by a claim (a
        sweep looking at a thread that just went idle) is let go or becomes a
        run within moments: a run waits for that, up to a lease's lifetime,
        rather than answer THREAD_BUSY for a thread nobody runs."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.lease_ttl
        while True:
            keeper = LeaseKeeper(self.coordination, state.thread_id, self._token(run_id), self.settings.lease_ttl_ms)
            try:
                await keeper.__aenter__()
                break
            except LeaseUnavailable as exc:
                holder = _holder_of(exc.holder or "")
                if holder.run_id or not wait_for_claims or loop.time() > deadline:
                    raise thread_busy(state.thread_id, holder.run_id) from None
            except CoordinationError as exc:
                raise _coordination_unavailable(exc) from exc
            await asyncio.sleep(0.01)
        self._leases[state.thread_id] = _Lease(keeper, run_id)
        await self._end_lost_run(state)

    def watch(self, state: LiveThread, handle: RunHandle) -> None:
        self._spawn(self._watch(handle, self._leases[state.thread_id].keeper), f"lease watch {handle.run_id}")

    async def _watch(self, handle: RunHandle, keeper: LeaseKeeper) -> None:
        """Aborts the run if its lease is lost: another replica may own the thread now."""
        assert handle._task is not None
        lost = asyncio.ensure_future(keeper.lost.wait())
        try:
            await asyncio.wait([lost, handle._task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if keeper.lost.is_set() and not handle.done:
            handle.stop("LEASE_LOST", "this replica lost the thread's lease; another replica may take it over")

    async def abandon(self, state: LiveThread, run_id: str) -> None:
        with contextlib.suppress(ClusterError):
            await self.cluster.unmark(state.thread_id, run_id)
        await self.release(state)

    async def finished(self, state: LiveThread, run_id: str) -> bool:
        try:
            await self.cluster.unmark(state.thread_id, run_id)
        except ClusterError as exc:
            log.warning("thread %s: could not clear run %s's marker: %s", state.thread_id, run_id, exc)
        return self.current_run(state.thread_id) == run_id

    async def hand_on(self, state: LiveThread, run_id: str) -> bool:
        """Passes the thread's lease to run `run_id` of this replica; False when it was lost."""
        lease = self._leases.get(state.thread_id)
        if lease is None or not lease.keeper.held:
            return False
        try:
            if not await lease.keeper.transfer(self._token(run_id)):
                return False
            await lease.keeper.__aexit__(None, None, None)
            adopted = LeaseKeeper(
                self.coordination, state.thread_id, self._token(run_id), self.settings.lease_ttl_ms, adopt=True
            )
            await adopted.__aenter__()
        except (CoordinationError, LeaseUnavailable) as exc:
            log.warning("thread %s: handing the lease to run %s failed: %s", state.thread_id, run_id, exc)
            return False
        self._leases[state.thread_id] = _Lease(adopted, run_id)
        return True

    async def release(self, state: LiveThread) -> None:
        lease = self._leases.pop(state.thread_id, None)
        if lease is not None:
            await lease.keeper.__aexit__(None, None, None)

    async def claim(self, state: LiveThread) -> bool:
        if state.thread_id in self._leases:
            return False
        try:
            await self._take(state, f"{_CLAIM}{uuid.uuid4().hex[:8]}", wait_for_claims=False)
        except FailedPrecondition:  # another replica took it first
            return False
        self.host.runs.telemetry.metrics.lease_takeover()
        return True

    async def _end_lost_run(self, state: LiveThread) -> None:
        """Under a freshly taken lease: a run still marked in flight on this
        thread belonged to a replica that died; its subscribers see it end."""
        thread_id = state.thread_id
        try:
            marker = await self.cluster.running(thread_id)
            if marker is None or self.host.runs.get(marker.run_id) is not None:
                return
            tail = await self.cluster.tail(thread_id)
            last = tail.last
            if last is None or last.run_id != marker.run_id or last.type not in TERMINAL_TYPES:
                seq = last.seq + 1 if last is not None and last.run_id == marker.run_id else 1
                reason = Abort("REPLICA_LOST", _lost_run(marker.replica, self.replica_id))
                await self.cluster.append(thread_id, [Chunk(reason, marker.run_id, seq)])
                log.warning("thread %s: run %s was lost with replica %s", thread_id, marker.run_id, marker.replica)
            await self.cluster.unmark(thread_id, marker.run_id)
        except ClusterError as exc:
            log.warning("thread %s: could not end a lost run: %s", thread_id, exc)

    # ------------------------------------------------------------ finding the holder

    async def holder(self, thread_id: str) -> Holder | None:
        try:
            token = await self.coordination.owner(thread_id)
        except CoordinationError as exc:
            raise _coordination_unavailable(exc) from exc
        return None if token is None else _holder_of(token)

    async def locate(self, run_id: str) -> RunMarker | None:
        try:
            return await self.cluster.run_marker(run_id)
        except ClusterError as exc:
            raise cluster_unavailable(exc) from exc

    async def forward(self, replica: str, request: PeerRequest) -> PeerAnswer | None:
        try:
            answer: PeerAnswer = await self.cluster.request(replica, request, self.settings.request_timeout)
        except PeerGone:
            return None  # it died: its lease has yet to expire, and a sweep takes its threads over
        except (PeerTimeout, ClusterError) as exc:
            raise Unavailable(
                f"replica {replica} did not answer: {exc}",
                "REPLICA_UNREACHABLE",
                retry_after=self.settings.lease_ttl,  # by then its lease has expired or been renewed
            ) from exc
        return answer

    # ------------------------------------------------------------ retried requests

    async def once(self, key: tuple[str, ...], answer: Callable[[], Awaitable[Routing]]) -> Routing:
        digest = hashlib.sha256("\x1f".join(key).encode()).hexdigest()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.patience + self.settings.request_timeout
        while True:
            try:
                if await self.cluster.claim_answer(digest, _ANSWER_TTL_MS):
                    break
                earlier = await self.cluster.recall_answer(digest)
            except ClusterError as exc:
                raise cluster_unavailable(exc) from exc
            if isinstance(earlier, Routing):
                return earlier
            if loop.time() > deadline:
                raise Unavailable(
                    "an earlier copy of this request is still being routed",
                    "REPLICA_UNREACHABLE",
                    retry_after=self.settings.lease_ttl,
                )
            await asyncio.sleep(0.01)  # the first copy is being routed (or failed and let go)
        try:
            routing = await answer()
        except BaseException:
            with contextlib.suppress(ClusterError):
                await self.cluster.drop_answer(digest)
            raise
        # Off the answer's path: a retry arriving meanwhile waits on the claim.
        self._spawn(self._store_answer(digest, routing), "store routing answer")
        return routing

    async def _store_answer(self, digest: str, routing: Routing) -> None:
        try:
            await self.cluster.store_answer(digest, routing, _ANSWER_TTL_MS)
        except ClusterError as exc:
            log.warning("could not record a routing answer for retries: %s", exc)

    # ------------------------------------------------------------ takeover

    async def _sweep_forever(self) -> None:
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake_sweeper.wait(), self.settings.sweep_every)
            if self._closed:
                return
            try:
                await self.sweep()
            except Exception:
                log.exception("replica sweep failed; retrying")

    async def sweep(self) -> int:
        """Takes over threads whose lease is free but which have a run marked in
        flight or signals pending; the number of pending signals replayed."""
        markers = await self.cluster.all_running()
        pending = await self.host.storage.list_pending()
        threads = {m.thread_id: m.resource_id for m in markers}
        for entry in pending:
            threads.setdefault(entry.thread_id, entry.resource_id)
        owners = await self.coordination.owners(list(threads))
        replayed = 0
        for thread_id, resource_id in threads.items():
            if thread_id in self._leases or self.host.busy(thread_id):
                continue
            if owners[thread_id] is None:
                replayed += await self.host.take_over(resource_id, thread_id, None)
        return replayed


def _lost_run(replica: str, here: str) -> str:
    """Why a run marked in flight never logged its end: which replica ran it,
    and, as far as this one can tell, what happened to it (a replica that
    lost Redis for a while is alive, but its run's end was never logged)."""
    if replica == here:
        return (
            f"this replica ({replica}) lost the shared state while the run was in flight,"
            " so the run's end never reached the thread's log"
        )
    return (
        f"replica {replica} stopped, or lost the shared state, while the run was in flight,"
        " so the run's end never reached the thread's log"
    )
