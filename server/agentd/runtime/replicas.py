"""Threads across replicas: ThreadRuntime for several agentd processes on one Redis.

A caller may reach any replica; a thread still behaves as one conversation:

- **Leases.** A run starts only under its thread's lease (owner token
  "<replica id>/<run id>", renewed by a LeaseKeeper). A run that ends with
  queued work hands the lease to the next run; otherwise it releases it. A run
  whose lease is lost is aborted (LEASE_LOST): another replica may own the
  thread now.
- **Forwarding.** A signal, abort or tool result for a thread whose lease
  another replica holds is sent to that replica (Cluster.request), and its
  answer is the caller's. Two replicas waking one idle thread race for the
  lease; the loser forwards to the winner and answers deliver with its run id.
- **Fan-out.** Every chunk goes to the thread's shared log (offsets assigned
  there); each replica follows the logs its subscribers watch with one
  blocking read, so every subscriber sees the same chunks with the same
  offsets and can resume on any replica.
- **Takeover.** Each replica sweeps for threads whose lease is free but which
  still have a run marked in flight (its replica died: the run gets an abort
  chunk, REPLICA_LOST) or acknowledged signals pending (they are replayed, in
  order, one run at a time). The sweep takes the lease first, so a thread is
  never taken over twice, and re-reads what is pending under it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentd.runtime.chunks import TERMINAL_TYPES, Abort, Chunk
from agentd.runtime.cluster import Cluster, ClusterError, LogTail, PeerGone, PeerTimeout, RunMarker
from agentd.runtime.coordination import (
    DEFAULT_LEASE_TTL_MS,
    Coordination,
    CoordinationError,
    LeaseKeeper,
    LeaseUnavailable,
)
from agentd.runtime.errors import FailedPrecondition, InvalidArgument, OutOfRange, Unavailable
from agentd.runtime.messages import new_id
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import Signal
from agentd.runtime.storage import Storage
from agentd.runtime.threads import (
    RouteRequest,
    Routing,
    Subscriber,
    ThreadRuntime,
    _Queued,
    _Thread,
    run_not_active,
    thread_busy,
)

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent
    from agentd.runtime.registry import RunRegistry
    from agentd.runtime.run import RunHandle

__all__ = ["ReplicatedThreads"]

log = logging.getLogger("agentd.replicas")

#: A lease token's run part for a replica that holds a thread only to take it over.
_CLAIM = "~claim-"
#: How long one blocking read of the followed logs waits (a new log interrupts it).
_FOLLOW_BLOCK_MS = 1000
#: How long a routing answer is kept for retries of its request.
_ANSWER_TTL_MS = 10 * 60 * 1000


@dataclass
class _Feed:
    """One followed log: the last offset read, and who gets its chunks."""

    cursor: int
    subscribers: set[Subscriber] = field(default_factory=set)


def _coordination_unavailable(error: Exception) -> Unavailable:
    return Unavailable(f"thread leases are unavailable: {error}", "COORDINATION_UNAVAILABLE")


def _cluster_unavailable(error: Exception) -> Unavailable:
    return Unavailable(f"the replicas' shared state is unavailable: {error}", "CLUSTER_UNAVAILABLE")


class ReplicatedThreads(ThreadRuntime):
    def __init__(
        self,
        runs: RunRegistry,
        storage: Storage,
        coordination: Coordination,
        cluster: Cluster,
        *,
        lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS,
        sweep_interval: float | None = None,
        request_timeout: float = 10.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(runs, storage, **kwargs)
        self.coordination = coordination
        self.cluster = cluster
        self.lease_ttl_ms = lease_ttl_ms
        #: How often to look for threads a dead replica left (half a lease by default).
        self.sweep_interval = sweep_interval if sweep_interval is not None else max(0.05, lease_ttl_ms / 2000)
        #: How long a forwarded request waits for the other replica's answer.
        self.request_timeout = request_timeout
        #: How long routing keeps trying while a thread changes hands (a dead owner's lease must expire).
        self.patience = 2 * lease_ttl_ms / 1000 + 2.0
        self._feeds: dict[str, _Feed] = {}
        self._joins: dict[str, asyncio.Lock] = {}
        self._reader: asyncio.Task[None] | None = None
        self._sweeper: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self._wake_sweeper = asyncio.Event()

    def __repr__(self) -> str:
        return f"ReplicatedThreads(replica_id={self.replica_id!r}, threads={len(self._threads)})"

    @property
    def replica_id(self) -> str:
        return self.cluster.replica_id

    def _token(self, run_id: str) -> str:
        return f"{self.replica_id}/{run_id}"

    @staticmethod
    def _run_of(token: str | None) -> str:
        run = (token or "").partition("/")[2]
        return "" if run.startswith(_CLAIM) else run

    @staticmethod
    def _replica_of(token: str) -> str:
        return token.partition("/")[0]

    def _spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _holder(self, thread_id: str) -> str | None:
        try:
            return await self.coordination.owner(thread_id)
        except CoordinationError as exc:
            raise _coordination_unavailable(exc) from exc

    # ------------------------------------------------------------ lifecycle

    async def recover(self) -> int:
        """Starts answering other replicas and sweeping; takes over what a dead
        replica (or this one, before a restart) left."""
        try:
            await self.cluster.serve(self._answer)
        except ClusterError as exc:
            raise _cluster_unavailable(exc) from exc
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_forever(), name="replica sweeper")
        return await self.sweep()

    async def shutdown(self, grace: float = 5.0) -> None:
        await super().shutdown(grace)
        # The sweeper stops between sweeps (a Redis command cut off mid-connect
        # would leave its connection outside the pool); the rest is cancelled.
        if self._sweeper is not None:
            self._wake_sweeper.set()
            try:
                await asyncio.wait_for(self._sweeper, 2.0)
            except (TimeoutError, Exception):
                pass
        for task in list(self._background):
            task.cancel()
        if self._reader is not None:
            self._reader.cancel()
        await asyncio.gather(*self._background, *([self._reader] if self._reader else []), return_exceptions=True)

    # ------------------------------------------------------------ runs under the lease

    async def start_run(
        self,
        agent: Agent,
        run_input: Any,
        options: ExecutionOptions,
        *,
        run_id: str | None = None,
        opening: Signal | None = None,
    ) -> RunHandle:
        memory = options.memory
        assert memory is not None and memory.thread is not None
        resource_id, thread_id = memory.resource or "", memory.thread.id
        state = self._thread(resource_id, thread_id)
        active = self.active_run(resource_id, thread_id)
        if active is not None:
            raise thread_busy(thread_id, active.run_id)
        if not self.runs.accepting:
            raise Unavailable("the server is shutting down; no new runs", "SERVER_SHUTDOWN")
        run_id = run_id or new_id()
        # The lease's run is over but still logging its end and letting go: wait for that.
        pump = self._pumps.get(state.lease_run or "") if state.lease_run != run_id else None
        if pump is not None and pump is not asyncio.current_task():
            await asyncio.wait([pump], timeout=self.lease_ttl_ms / 1000)
            active = self.active_run(resource_id, thread_id)
            if active is not None:
                raise thread_busy(thread_id, active.run_id)
        if state.keeper is None or state.lease_run != run_id:
            if state.keeper is not None and state.keeper.held:
                raise thread_busy(thread_id, self._run_of(f"/{state.lease_run}"))  # mid-handover, or a takeover
            keeper = LeaseKeeper(self.coordination, thread_id, self._token(run_id), self.lease_ttl_ms)
            try:
                await keeper.__aenter__()
            except LeaseUnavailable as exc:
                raise thread_busy(thread_id, self._run_of(exc.holder)) from None
            except CoordinationError as exc:
                raise _coordination_unavailable(exc) from exc
            state.keeper, state.lease_run = keeper, run_id
            await self._end_lost_run(state)
        keeper = state.keeper
        try:
            await self.cluster.mark_running(RunMarker(run_id, thread_id, resource_id, agent.id, self.replica_id))
            handle = self._launch(agent, run_input, options, run_id=run_id, opening=opening)
        except BaseException as exc:
            with contextlib.suppress(ClusterError):
                await self.cluster.unmark(thread_id, run_id)
            await self._let_go(state)
            if isinstance(exc, ClusterError):
                raise _cluster_unavailable(exc) from exc
            raise
        self._spawn(self._watch(handle, keeper), f"lease watch {run_id}")
        return handle

    async def _watch(self, handle: RunHandle, keeper: LeaseKeeper) -> None:
        """Aborts the run if its lease is lost: another replica may own the thread now."""
        assert handle._task is not None
        lost = asyncio.ensure_future(keeper.lost.wait())
        try:
            await asyncio.wait([lost, handle._task], return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
        if keeper.lost.is_set() and not handle.done:
            handle.abort("LEASE_LOST", "this replica lost the thread's lease; another replica may take it over")

    async def _let_go(self, state: _Thread) -> None:
        """Releases the lease this process holds on the thread (if it still does)."""
        keeper, state.keeper, state.lease_run = state.keeper, None, None
        if keeper is not None:
            await keeper.__aexit__(None, None, None)

    async def _hand_on(self, state: _Thread, run_id: str) -> bool:
        """Passes the thread's lease to run `run_id` of this replica; False when it was lost."""
        keeper = state.keeper
        if keeper is None or not keeper.held:
            return False
        try:
            if not await keeper.transfer(self._token(run_id)):
                return False
            await keeper.__aexit__(None, None, None)
            adopted = LeaseKeeper(self.coordination, state.key[1], self._token(run_id), self.lease_ttl_ms, adopt=True)
            await adopted.__aenter__()
        except (CoordinationError, LeaseUnavailable) as exc:
            log.warning("thread %s: handing the lease to run %s failed: %s", state.key[1], run_id, exc)
            return False
        state.keeper, state.lease_run = adopted, run_id
        return True

    async def _after_run(self, state: _Thread, handle: RunHandle) -> None:
        async with state.lock:
            try:
                await self.cluster.unmark(state.key[1], handle.run_id)
            except ClusterError as exc:
                log.warning("thread %s: could not clear run %s's marker: %s", state.key[1], handle.run_id, exc)
            if state.lease_run != handle.run_id:
                return  # the lease was never this run's (or is gone already)
            running = not self._closed and self.runs.accepting
            if state.queue and running and await self._hand_on(state, state.queue[0].run_id):
                await self._next(state)
                return
            await self._let_go(state)
            self._forget_queue(state)

    def _forget_queue(self, state: _Thread) -> None:
        """Queued runs this replica can no longer start: their signals stay
        pending in storage, for whichever replica takes the thread next."""
        for item in state.queue:
            self._outbox.pop(item.run_id, None)
        state.queue.clear()

    async def _end_lost_run(self, state: _Thread) -> None:
        """Under a freshly taken lease: a run still marked in flight on this
        thread belonged to a replica that died; its subscribers see it end."""
        thread_id = state.key[1]
        try:
            marker = await self.cluster.running(thread_id)
            if marker is None or self.runs.get(marker.run_id) is not None:
                return
            tail = await self.cluster.tail(thread_id)
            last = tail.last
            if last is None or last.run_id != marker.run_id or last.type not in TERMINAL_TYPES:
                seq = last.seq + 1 if last is not None and last.run_id == marker.run_id else 1
                reason = Abort("REPLICA_LOST", f"replica {marker.replica} stopped while the run was in flight")
                await self.cluster.append(thread_id, [Chunk(reason, marker.run_id, seq)])
                log.warning("thread %s: run %s was lost with replica %s", thread_id, marker.run_id, marker.replica)
            await self.cluster.unmark(thread_id, marker.run_id)
        except ClusterError as exc:
            log.warning("thread %s: could not end a lost run: %s", thread_id, exc)

    async def _write(self, state: _Thread, chunks: list[Chunk]) -> None:
        for attempt in range(2):
            try:
                await self.cluster.append(state.key[1], chunks)
                return
            except ClusterError as exc:
                if attempt:
                    log.error("thread %s: %d chunk(s) not logged for subscribers: %s", state.key[1], len(chunks), exc)
                else:
                    await asyncio.sleep(0.05)

    # ------------------------------------------------------------ takeover

    async def _sweep_forever(self) -> None:
        while not self._closed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake_sweeper.wait(), self.sweep_interval)
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
        pending = await self.storage.list_pending()
        threads = {m.thread_id: m.resource_id for m in markers}
        for entry in pending:
            threads.setdefault(entry.thread_id, entry.resource_id)
        owners = await self.coordination.owners(list(threads))
        replayed = 0
        for thread_id, resource_id in threads.items():
            state = self._threads.get(thread_id)
            if state is not None and (state.keeper is not None or state.lock.locked() or state.active is not None):
                continue
            if owners[thread_id] is None:
                replayed += await self._take_over(resource_id, thread_id)
        return replayed

    async def _take_over(self, resource_id: str, thread_id: str) -> int:
        state = self._thread(resource_id, thread_id)
        async with state.lock:
            if state.keeper is not None or self.active_run(resource_id, thread_id) is not None:
                return 0
            claim = f"{_CLAIM}{uuid.uuid4().hex[:8]}"
            keeper = LeaseKeeper(self.coordination, thread_id, self._token(claim), self.lease_ttl_ms)
            try:
                await keeper.__aenter__()
            except LeaseUnavailable:
                return 0
            state.keeper, state.lease_run = keeper, claim
            await self._end_lost_run(state)
            # Re-read under the lease: a run that just ended cleared its own before letting go.
            held = {signal_id for ids in self._outbox.values() for signal_id in ids}
            entries = [e for e in await self.storage.list_pending() if e.thread_id == thread_id]
            for entry in entries:
                if entry.signal.id in held:
                    continue
                try:
                    agent = self.agents.get(entry.agent_id)
                except Exception:
                    log.warning("dropping a pending signal for unknown agent %r", entry.agent_id)
                    await self.storage.delete_pending([entry.signal.id])
                    continue
                queued = _Queued(agent, entry.signal, new_id(), self._options_for(None, resource_id, thread_id))
                state.queue.append(queued)
                self._outbox.setdefault(queued.run_id, []).append(entry.signal.id)
            if state.queue and await self._hand_on(state, state.queue[0].run_id):
                log.info("thread %s: took over %d pending signal(s)", thread_id, len(state.queue))
                replayed = len(state.queue)
                await self._next(state)
                return replayed
            await self._let_go(state)
            self._forget_queue(state)
            return 0

    # ------------------------------------------------------------ routing

    async def route(self, request: RouteRequest) -> Routing:
        """Routes here, or on the replica that holds the thread. A retry of the
        same request (same signal id and target) gets the first answer, on
        whichever replica it lands: the first copy claims the answer in Redis."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        key = hashlib.sha256("\x1f".join(request.idempotency_key).encode()).hexdigest()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.patience + self.request_timeout
        while True:
            try:
                if await self.cluster.claim_answer(key, _ANSWER_TTL_MS):
                    break
                earlier = await self.cluster.recall_answer(key)
            except ClusterError as exc:
                raise _cluster_unavailable(exc) from exc
            if earlier:
                return Routing.from_wire(earlier)
            if loop.time() > deadline:
                raise Unavailable("an earlier copy of this request is still being routed", "REPLICA_UNREACHABLE")
            await asyncio.sleep(0.01)  # the first copy is being routed (or failed and let go)
        try:
            routing = await self._route_anywhere(request)
        except BaseException:
            with contextlib.suppress(ClusterError):
                await self.cluster.drop_answer(key)
            raise
        # Off the answer's path: a retry arriving meanwhile waits on the claim.
        self._spawn(self._store_answer(key, routing.to_wire()), "store routing answer")
        return routing

    async def _store_answer(self, key: str, answer: dict[str, Any]) -> None:
        try:
            await self.cluster.store_answer(key, answer, _ANSWER_TTL_MS)
        except ClusterError as exc:
            log.warning("could not record a routing answer for retries: %s", exc)

    async def _route_anywhere(self, request: RouteRequest) -> Routing:
        """`route` without the retry bookkeeping."""
        here = ThreadRuntime.route
        resource_id, thread_id, run_id = request.resource_id, request.thread_id, request.run_id
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.patience
        while True:
            state = self._thread(resource_id, thread_id)
            async with state.lock:
                if self.active_run(resource_id, thread_id) is not None:
                    return await here(self, request)
                holder = await self._holder(thread_id)
                if holder is None:
                    if run_id:
                        raise run_not_active(run_id, thread_id)
                    try:
                        # Idle: persist/discard here; wake takes the lease in start_run.
                        return await here(self, request)
                    except FailedPrecondition as exc:
                        if exc.reason != "THREAD_BUSY":
                            raise
                        # Lost the race for the lease: deliver to the winner.
                        holder = await self._holder(thread_id)
                        if holder is None:
                            continue
            if run_id and self._run_of(holder) not in ("", run_id):
                raise run_not_active(run_id, thread_id)
            replica = self._replica_of(holder)
            answer: dict[str, Any] | None = None
            if replica != self.replica_id:
                # What the holder needs to act on an active thread (no idle behaviour:
                # when idle it answers not_here and this replica looks again).
                forwarded = ("resource_id", "thread_id", "if_active", "active_attributes", "run_id", "queue")
                body = {
                    "agent_id": request.agent_id,
                    "signal": request.signal,
                    **{k: getattr(request, k) for k in forwarded},
                }
                try:
                    answer = await self.cluster.request(replica, "route", body, self.request_timeout)
                except PeerGone:
                    answer = None  # its lease has yet to expire; a sweep takes the thread over
                except (PeerTimeout, ClusterError) as exc:
                    raise Unavailable(
                        f"replica {replica} holding thread {thread_id!r} did not answer: {exc}", "REPLICA_UNREACHABLE"
                    ) from exc
            if answer is not None and answer.get("action") != "not_here":
                return Routing.from_wire(answer)
            # The thread is changing hands (a run ending, a lease expiring): look again.
            if loop.time() > deadline:
                raise Unavailable(
                    f"thread {thread_id!r} is held by replica {replica}, which does not answer", "REPLICA_UNREACHABLE"
                )
            await asyncio.sleep(0.005 if answer is not None or replica == self.replica_id else self.sweep_interval / 4)

    async def _answer(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        """Another replica's request for a thread (or run) this one holds."""
        if op == "route":
            resource_id, thread_id = str(body["resource_id"]), str(body["thread_id"])
            state = self._thread(resource_id, thread_id)
            async with state.lock:
                if self.active_run(resource_id, thread_id) is None:
                    return {"action": "not_here"}
                routing = await ThreadRuntime.route(
                    self,
                    RouteRequest(
                        agent_id=str(body["agent_id"]),
                        signal=body["signal"],
                        resource_id=resource_id,
                        thread_id=thread_id,
                        if_active=body["if_active"],
                        active_attributes=body.get("active_attributes"),
                        run_id=body.get("run_id"),
                        queue=bool(body.get("queue")),
                    ),
                )
            return routing.to_wire()
        if op == "abort":
            aborted = await ThreadRuntime.abort(
                self, str(body["resource_id"]), str(body["thread_id"]), body.get("run_id")
            )
            return {"run_id": aborted}
        if op == "tool_result":
            answered = await ThreadRuntime.answer_tool(
                self, str(body["run_id"]), str(body["tool_call_id"]), body.get("result"), bool(body.get("is_error"))
            )
            return {"answered": answered}
        raise InvalidArgument.field("op", f"unknown replica request {op!r}")

    async def _ask_holder(self, thread_id: str, op: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """The answer of the replica holding the thread; None when no other (live) replica does."""
        holder = await self._holder(thread_id)
        if holder is None or self._replica_of(holder) == self.replica_id:
            return None
        return await self._ask(self._replica_of(holder), op, body)

    async def _ask(self, replica: str, op: str, body: dict[str, Any]) -> dict[str, Any] | None:
        try:
            return await self.cluster.request(replica, op, body, self.request_timeout)
        except PeerGone:
            return None  # it died: nothing of its runs is left to reach
        except (PeerTimeout, ClusterError) as exc:
            raise Unavailable(f"replica {replica} did not answer: {exc}", "REPLICA_UNREACHABLE") from exc

    async def abort(self, resource_id: str, thread_id: str, run_id: str | None = None) -> str | None:
        if self.active_run(resource_id, thread_id) is not None:
            return await super().abort(resource_id, thread_id, run_id)
        answer = await self._ask_holder(
            thread_id, "abort", {"resource_id": resource_id, "thread_id": thread_id, "run_id": run_id}
        )
        return None if answer is None else answer.get("run_id")

    async def answer_tool(self, run_id: str, tool_call_id: str, result: Any, is_error: bool) -> bool:
        if self.runs.get(run_id) is not None:
            return await super().answer_tool(run_id, tool_call_id, result, is_error)
        marker = await self._marker(run_id)
        if marker is None or marker.replica == self.replica_id:
            return False
        body = {"run_id": run_id, "tool_call_id": tool_call_id, "result": result, "is_error": is_error}
        answer = await self._ask(marker.replica, "tool_result", body)
        return bool(answer and answer.get("answered"))

    async def _marker(self, run_id: str) -> RunMarker | None:
        try:
            return await self.cluster.run_marker(run_id)
        except ClusterError as exc:
            raise _cluster_unavailable(exc) from exc

    async def thread_of_run(self, run_id: str) -> tuple[str, str] | None:
        local = self._local_thread_of_run(run_id)
        if local is not None:
            return local
        marker = await self._marker(run_id)
        return None if marker is None else (marker.resource_id, marker.thread_id)

    async def active_run_id(self, resource_id: str, thread_id: str) -> str | None:
        active = self.active_run(resource_id, thread_id)
        if active is not None:
            return active.run_id
        return self._run_of(await self._holder(thread_id)) or None

    # ------------------------------------------------------------ subscriptions

    async def subscribe(
        self, resource_id: str, thread_id: str, *, resume_epoch: str | None = None, after_offset: int | None = None
    ) -> tuple[ThreadRuntime.Snapshot, list[Chunk], Subscriber]:
        """As ThreadRuntime.subscribe, from the thread's shared log. Joins are
        one at a time per thread: a joiner on a followed log is registered
        before it reads its replay, so what the feed pushes meanwhile is
        either in the replay or after it (duplicates are dropped by offset)."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        state = self._thread(resource_id, thread_id)
        subscriber = Subscriber(self.subscriber_buffer)
        async with self._joins.setdefault(thread_id, asyncio.Lock()):
            feed = self._feeds.get(thread_id)
            if feed is not None:
                feed.subscribers.add(subscriber)
            try:
                tail, replay, floor = await self._catch_up(thread_id, resume_epoch, after_offset)
            except BaseException:
                if feed is not None:
                    feed.subscribers.discard(subscriber)
                raise
            if feed is None:
                self._feeds[thread_id] = _Feed(floor, {subscriber})
                self._follow()
            else:
                subscriber.queue = deque(c for c in subscriber.queue if c.offset > floor)
            subscriber.after = floor
            state.subscribers.add(subscriber)
        try:
            active = await self.active_run_id(resource_id, thread_id)
        except Unavailable:
            self.unsubscribe(resource_id, thread_id, subscriber)
            raise
        return ThreadRuntime.Snapshot(active or "", tail.epoch, tail.last_offset), replay, subscriber

    async def _catch_up(
        self, thread_id: str, resume_epoch: str | None, after_offset: int | None
    ) -> tuple[LogTail, list[Chunk], int]:
        try:
            tail = await self.cluster.tail(thread_id)
            if resume_epoch is None:
                return tail, [], tail.last_offset
            after = after_offset or 0
            if resume_epoch != tail.epoch or after < tail.dropped_until:
                raise OutOfRange(
                    "the thread's chunk log no longer holds that point; list the messages and subscribe again",
                    "RESUME_OFFSET_EXPIRED",
                    {"log_epoch": tail.epoch, "dropped_until": str(tail.dropped_until)},
                )
            if after > tail.last_offset and tail.last_offset:
                raise InvalidArgument.field("resume.after_offset", "is beyond the last offset of the thread's log")
            replay = await self.cluster.read(thread_id, after)
        except ClusterError as exc:
            raise _cluster_unavailable(exc) from exc
        return tail, replay, replay[-1].offset if replay else after

    def unsubscribe(self, resource_id: str, thread_id: str, subscriber: Subscriber) -> None:
        super().unsubscribe(resource_id, thread_id, subscriber)
        feed = self._feeds.get(thread_id)
        if feed is not None:
            feed.subscribers.discard(subscriber)

    def _follow(self) -> None:
        """Makes the reader pick up a newly followed log at once."""
        if self._reader is None or self._reader.done():
            self._reader = asyncio.get_running_loop().create_task(self._read_forever(), name="follow thread logs")
        else:
            self._spawn(self.cluster.interrupt_read(), "interrupt follow")

    async def _read_forever(self) -> None:
        while not self._closed:
            for thread_id in [t for t, f in self._feeds.items() if not f.subscribers]:
                del self._feeds[thread_id]
            if not self._feeds:
                return
            cursors = {t: f.cursor for t, f in self._feeds.items()}
            try:
                got = await self.cluster.read_new(cursors, _FOLLOW_BLOCK_MS)
            except ClusterError as exc:
                log.warning("following thread logs failed, retrying: %s", exc)
                await asyncio.sleep(0.2)
                continue
            for thread_id, chunks in got.items():
                feed = self._feeds.get(thread_id)
                if feed is None:
                    continue
                for chunk in chunks:
                    if chunk.offset <= feed.cursor:
                        continue
                    feed.cursor = chunk.offset
                    for subscriber in list(feed.subscribers):
                        subscriber.push(chunk)
