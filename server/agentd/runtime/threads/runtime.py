"""Live threads: which run owns each thread, signal routing, queued runs, the
thread's chunk log with offsets, and its subscribers.

One ThreadRuntime per process, composed of a ThreadLog (where the chunks go:
this process, or the replicas' shared log) and a ThreadOwnership (who may
drive a thread: this process, or whichever replica holds its lease). The
algorithm is written once; the two parts decide what "here" means.

A decision about one thread that awaits (routing, a run's end, a takeover)
holds the thread's lock. Starting a run checks and takes the thread with no
await in between on one replica, so two senders racing on an idle thread
produce exactly one wake: the second sees the first's run and is delivered
into it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentd.runtime.chunks import Chunk, Finish, Payload, SignalEcho, Start, Usage
from agentd.runtime.cluster import RunMarker
from agentd.runtime.concurrency import to_its_end
from agentd.runtime.errors import FailedPrecondition, Unavailable, storage_unavailable
from agentd.runtime.identity import tenant_of
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import new_id, utcnow
from agentd.runtime.options import ExecutionOptions, MemoryOptions, ThreadRef
from agentd.runtime.signals import Signal, to_db_message, with_delivery_attributes
from agentd.runtime.storage import PendingSignal, Storage, StorageError, Thread
from agentd.runtime.threads.log import ThreadLog
from agentd.runtime.threads.ownership import Holder, ThreadOwnership
from agentd.runtime.threads.recovery import OutboxRecovery
from agentd.runtime.threads.routing import IdleBehavior, RouteRequest, Routing, run_not_active, thread_busy
from agentd.runtime.threads.settings import ThreadSettings
from agentd.runtime.threads.state import LiveThread, Queued
from agentd.runtime.threads.subscriber import Subscriber

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent
    from agentd.runtime.registry import AgentRegistry, RunRegistry
    from agentd.runtime.run import RunHandle
    from agentd.runtime.threads import peers
    from agentd.runtime.threads.peers import PeerAnswer, PeerRequest
else:
    peers = lazy("agentd.runtime.threads.peers")  # replicas only (LeasedOwnership loads it)

__all__ = ["Snapshot", "ThreadRuntime"]

log = logging.getLogger("agentd.threads")


@dataclass(frozen=True)
class Snapshot:
    active_run_id: str
    log_epoch: str
    last_offset: int


class ThreadRuntime:
    def __init__(
        self,
        runs: RunRegistry,
        storage: Storage,
        agents: AgentRegistry,
        *,
        log: ThreadLog,
        ownership: ThreadOwnership,
        settings: ThreadSettings,
    ) -> None:
        self.runs = runs
        self.storage = storage
        self.agents = agents
        self.log = log
        self.ownership = ownership
        self.settings = settings
        self._threads: dict[str, LiveThread] = {}
        self._closed = False
        #: Acknowledged signals not yet through a finished run, by the run that holds them.
        self._outbox: dict[str, list[str]] = {}
        #: Each thread-bound run's logging task, by run id (it ends after the run and its hand-over).
        self._pumps: dict[str, asyncio.Task[None]] = {}
        #: Threads whose acknowledged signals a storage failure left in the outbox, replayed once it answers.
        self.recovery = OutboxRecovery(
            lambda resource_id, thread_id: self.take_over(resource_id, thread_id, None),
            lambda thread_id: thread_id not in self._threads,
        )

    def __repr__(self) -> str:
        return f"ThreadRuntime({self.ownership!r}, threads={len(self._threads)})"

    def _state(self, resource_id: str, thread_id: str) -> LiveThread:
        # Keyed by thread id alone: storage keeps thread ids unique across
        # resources and a run never binds to another resource's thread.
        state = self._threads.get(thread_id)
        if state is None:
            state = self._threads[thread_id] = LiveThread(resource_id, thread_id)
        return state

    @contextmanager
    def _using(self, resource_id: str, thread_id: str) -> Iterator[LiveThread]:
        """The thread's state, kept while it is used; an idle thread keeps none."""
        state = self._state(resource_id, thread_id)
        state.users += 1
        try:
            yield state
        finally:
            state.users -= 1
            self._drop_if_idle(state)

    def _drop_if_idle(self, state: LiveThread) -> None:
        idle = state.users == 0 and state.active is None and not state.queue and not state.lock.locked()
        if idle and self.ownership.current_run(state.thread_id) is None and self._threads.get(state.thread_id) is state:
            del self._threads[state.thread_id]

    def __len__(self) -> int:
        """Threads this process keeps state for (active, queued, or being decided)."""
        return len(self._threads)

    def queued_messages(self) -> int:
        """Messages waiting for their thread's run to end (a snapshot: metrics read it off the event loop)."""
        return sum(len(state.queue) for state in list(self._threads.values()))

    # ------------------------------------------------------------ lifecycle

    async def open(self) -> int:
        """Starts owning threads: recovers the acknowledged signals a stopped
        process (or a dead replica) left; how many were replayed."""
        return await self.ownership.start(self)

    async def shutdown(self, grace: float = 5.0) -> None:
        """Ends every subscription (their streams answer UNAVAILABLE), and waits
        up to `grace` seconds for the runs' logs to be written (the runs were
        ended first: RunRegistry.shutdown)."""
        self._closed = True
        for state in self._threads.values():
            state.queue.clear()
        await self.log.close()
        if self._pumps:
            await asyncio.wait(list(self._pumps.values()), timeout=grace)
        await self.recovery.close()
        await self.ownership.close()

    # ------------------------------------------------------------ queries

    def active_run(self, resource_id: str, thread_id: str) -> RunHandle | None:
        """The thread's active run, when this process runs it."""
        state = self._threads.get(thread_id)
        return state.running if state is not None else None

    async def active_run_id(self, resource_id: str, thread_id: str) -> str | None:
        """The id of the thread's active run, wherever it runs."""
        active = self.active_run(resource_id, thread_id)
        if active is not None:
            return active.run_id
        holder = await self.ownership.holder(thread_id)
        return holder.run_id or None if holder is not None else None

    async def thread_of_run(self, run_id: str) -> tuple[str, str] | None:
        """(resource id, thread id) of an active run, wherever it runs."""
        for state in self._threads.values():
            if state.running is not None and state.running.run_id == run_id:
                return state.resource_id, state.thread_id
        marker = await self.ownership.locate(run_id)
        return None if marker is None else (marker.resource_id, marker.thread_id)

    def busy(self, thread_id: str) -> bool:
        state = self._threads.get(thread_id)
        return state is not None and (state.lock.locked() or state.active is not None)

    async def settled(self, run_id: str) -> None:
        """Returns once a thread-bound run's chunks are logged and its thread is
        handed on (to the next queued run) or free: what the run's caller waits
        for before answering, so its next call on the thread finds it idle."""
        pump = self._pumps.get(run_id)
        if pump is not None:
            await asyncio.wait([pump])  # its failures are logged there, not the caller's

    # ------------------------------------------------------------ runs

    async def start_run(
        self,
        agent: Agent,
        run_input: Any,
        options: ExecutionOptions,
        *,
        run_id: str | None = None,
        opening: Signal | None = None,
        commit: Signal | None = None,
    ) -> RunHandle:
        """Starts a thread-bound run (the thread must be idle) and logs its chunks.
        `commit`: a signal to write to the outbox once the thread is held and
        before the run starts (held first, so no takeover replays it meanwhile)."""
        memory = options.memory
        assert memory is not None and memory.thread is not None
        with self._using(memory.resource or "", memory.thread.id) as state:
            return await self._start(state, agent, run_input, options, run_id, opening, commit)

    async def _start(
        self,
        state: LiveThread,
        agent: Agent,
        run_input: Any,
        options: ExecutionOptions,
        run_id: str | None,
        opening: Signal | None,
        commit: Signal | None,
    ) -> RunHandle:
        if state.running is not None:
            raise thread_busy(state.thread_id, state.running.run_id)
        if not self.runs.accepting:
            raise Unavailable("the server is shutting down; no new runs", "SERVER_SHUTDOWN")
        run_id = run_id or new_id()
        # The thread's previous run is over but still logging its end and letting go: wait for that.
        previous = self.ownership.current_run(state.thread_id)
        pump = self._pumps.get(previous) if previous is not None and previous != run_id else None
        if pump is not None and pump is not asyncio.current_task():
            await asyncio.wait([pump], timeout=self.settings.lease_ttl)
            if state.running is not None:
                raise thread_busy(state.thread_id, state.running.run_id)
        await self.ownership.begin(
            state, RunMarker(run_id, state.thread_id, state.resource_id, agent.id, self.ownership.replica_id)
        )
        try:
            if commit is not None:
                await self._commit(commit, agent, state)
            try:
                handle = self._launch(state, agent, run_input, options, run_id, opening)
            except BaseException:
                if commit is not None and not commit.transient:
                    await self._release([commit.id])  # it never ran
                raise
        except BaseException:
            await self.ownership.abandon(state, run_id)
            raise
        self.ownership.watch(state, handle)
        return handle

    def _launch(
        self,
        state: LiveThread,
        agent: Agent,
        run_input: Any,
        options: ExecutionOptions,
        run_id: str,
        opening: Signal | None,
    ) -> RunHandle:
        if state.running is not None:
            raise thread_busy(state.thread_id, state.running.run_id)
        handle = self.runs.start(agent, run_input, options, run_id=run_id)
        handle.client_tool_timeout = self.settings.client_tool_timeout
        if opening is not None:
            handle.opening_signals.append(opening)
        state.active, state.agent, state.options = handle, agent, options
        state.users += 1  # until the run's logging task is done with the thread
        pump = asyncio.get_running_loop().create_task(self._pump(state, handle), name=f"log {handle.run_id}")
        self._pumps[handle.run_id] = pump
        pump.add_done_callback(lambda _: self._pumps.pop(handle.run_id, None))
        return handle

    async def _pump(self, state: LiveThread, handle: RunHandle) -> None:
        try:
            async for batch in handle.buffer.batches(linger=self.runs.linger):
                await self.log.append(state.thread_id, batch)
        finally:
            if state.active is handle:
                state.active = None
            # Signals delivered too late for this run get their own run, in order.
            leftover = list(handle.pending_signals)
            handle.pending_signals.clear()
            held = self._outbox.pop(handle.run_id, [])
            for signal in leftover if not state.deleting else ():  # already committed: a run of their own
                self._queue(state, state.agent or handle.agent, signal, state.options)
            taken = [s for s in held if s not in {x.id for x in leftover}]
            try:
                if taken and await _failed_on_storage(handle):
                    self.recovery.add(state.resource_id, state.thread_id)  # what it took is not saved: run again
                elif not await self._release(taken):
                    self.recovery.add(state.resource_id, state.thread_id)
                await self._after_run(state, handle)
            finally:
                state.users -= 1
                self._drop_if_idle(state)

    async def _after_run(self, state: LiveThread, handle: RunHandle) -> None:
        """The thread's run ended (its leftovers already queued): the next
        queued run gets the thread, or it is let go."""
        async with state.lock:
            if not await self.ownership.finished(state, handle.run_id):
                return  # the thread was never this run's (or is gone already)
            running = not self._closed and self.runs.accepting
            if state.queue and running and await self.ownership.hand_on(state, state.queue[0].run_id):
                await self._next(state)
                return
            await self.ownership.release(state)
            self._forget_queue(state)

    def _forget_queue(self, state: LiveThread) -> None:
        """Queued runs this process can no longer start: their signals stay
        pending in storage, for whoever takes the thread next."""
        for item in state.queue:
            self._outbox.pop(item.run_id, None)
        state.queue.clear()

    async def _next(self, state: LiveThread) -> None:
        """Starts the next queued run, one at a time, in order."""
        while state.queue and state.active is None and not self._closed:
            item = state.queue.popleft()
            try:
                agent = await self.agents.refresh(item.agent, tenant_of(state.thread_id))  # overrides as of now
                await self.start_run(
                    agent, [to_db_message(item.signal)], item.options, run_id=item.run_id, opening=item.signal
                )
            except Exception:
                log.exception("queued run %s could not start", item.run_id)

    async def _release(self, signal_ids: list[str]) -> bool:
        """Drops signals from the outbox once the run that took them ended; False when storage failed."""
        if not signal_ids:
            return True
        try:
            await self.storage.delete_pending(signal_ids)
        except Exception:
            log.exception("could not clear %d delivered signal(s) from the outbox", len(signal_ids))
            return False
        return True

    async def _commit(self, signal: Signal, agent: Agent, state: LiveThread) -> None:
        """Writes a signal to the outbox before anything acts on it: nothing is
        acknowledged (or run) that a storage failure could lose. A failure is
        UNAVAILABLE STORAGE_UNAVAILABLE, and nothing was routed. Transient
        signals are never stored."""
        if signal.transient:
            return
        try:
            await self.storage.save_pending(PendingSignal(signal, agent.id, state.resource_id, state.thread_id))
        except StorageError as exc:
            raise storage_unavailable(exc) from exc

    def _hold(self, run_id: str, signal: Signal) -> None:
        """The run that takes a committed signal: it leaves the outbox when that run ends."""
        if not signal.transient:
            self._outbox.setdefault(run_id, []).append(signal.id)

    def _queue(self, state: LiveThread, agent: Agent, signal: Signal, options: ExecutionOptions | None) -> Queued:
        """Queues a committed signal's run after the thread's active one."""
        queued = Queued(agent, signal, new_id(), self._options_for(options, state.resource_id, state.thread_id))
        state.queue.append(queued)
        self._hold(queued.run_id, signal)
        return queued

    async def take_over(self, resource_id: str, thread_id: str, entries: list[PendingSignal] | None) -> int:
        """Replays a thread's acknowledged signals that no finished run took, in
        order, one run at a time, once the thread is held for it; `entries` as
        read before, or None to read them once the thread is held."""
        with self._using(resource_id, thread_id) as state:
            return await self._take_over(state, entries)

    async def _take_over(self, state: LiveThread, entries: list[PendingSignal] | None) -> int:
        thread_id = state.thread_id
        async with state.lock:
            if state.running is not None or not await self.ownership.claim(state):
                return 0
            try:
                replayable = await self._replayable(thread_id, entries)
            except BaseException:
                await self.ownership.release(state)  # storage failed: let go, so a later takeover can try
                raise
            for agent, signal in replayable:
                self._queue(state, agent, signal, None)
            if state.queue and await self.ownership.hand_on(state, state.queue[0].run_id):
                replayed = len(state.queue)
                log.info("thread %s: took over %d pending signal(s)", thread_id, replayed)
                await self._next(state)
                return replayed
            await self.ownership.release(state)
            self._forget_queue(state)
            return 0

    async def _replayable(self, thread_id: str, entries: list[PendingSignal] | None) -> list[tuple[Agent, Signal]]:
        """The thread's pending signals to replay, in order, with their agents."""
        if entries is None:  # read under the claim: a run that just ended cleared its own first
            entries = [e for e in await self.storage.list_pending() if e.thread_id == thread_id]
        held = {signal_id for ids in self._outbox.values() for signal_id in ids}
        replayable = []
        for entry in await self._unsaved([e for e in entries if e.signal.id not in held]):
            try:
                code_agent = self.agents.get(entry.agent_id)
            except Exception:
                log.warning("dropping a pending signal for unknown agent %r", entry.agent_id)
                await self.storage.delete_pending([entry.signal.id])
                continue
            # Outside the try: overrides that cannot be read now must not drop the signal.
            agent = await self.agents.overrides.effective(code_agent, tenant_of(entry.thread_id))
            replayable.append((agent, entry.signal))
        return replayable

    async def _unsaved(self, entries: list[PendingSignal]) -> list[PendingSignal]:
        """The pending signals no run saved. A run saves the signals it took
        with its answer, then clears them from the outbox: one it saved but
        could not clear (storage failed, or the process died, in between) is
        cleared now, never run twice."""
        if not entries:
            return []
        stored = await self.storage.get_messages([e.signal.id for e in entries])
        saved = {m.id for m in stored if m.role == "signal" and m.thread_id == entries[0].thread_id}
        if saved:
            await self.storage.delete_pending(list(saved))
        return [e for e in entries if e.signal.id not in saved]

    # ------------------------------------------------------------ routing

    def _options_for(self, options: ExecutionOptions | None, resource_id: str, thread_id: str) -> ExecutionOptions:
        # A woken run's memory always comes from the target's ids.
        return replace(options or ExecutionOptions(), memory=MemoryOptions(resource_id, ThreadRef(thread_id)))

    async def route(self, request: RouteRequest) -> Routing:
        """Routes a signal into a thread, here or on the replica that holds it.
        The answer is sent once it is decided (and, for deliver and wake of a
        stored signal, once it is committed). A retry of the same request (same
        signal id and target) gets the first answer."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        request.check_tenant()
        return await self.ownership.once(request.idempotency_key, lambda: self._route_anywhere(request))

    async def _route_anywhere(self, request: RouteRequest) -> Routing:
        thread_id, run_id = request.thread_id, request.run_id
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ownership.patience
        while True:
            with self._using(request.resource_id, thread_id) as state:
                holder = await self._route_or_find(state, request)
            if isinstance(holder, Routing):
                return holder
            if holder is None:
                continue  # lost the race for an idle thread, and its winner is gone already
            if run_id and holder.run_id not in ("", run_id):
                raise run_not_active(run_id, thread_id)
            answer: PeerAnswer | None = None
            if holder.replica != self.ownership.replica_id:
                forwarded = replace(request, if_idle="wake", idle_attributes=None, stream_options=None)
                answer = await self.ownership.forward(holder.replica, forwarded)
            if answer is not None and isinstance(answer, peers.RouteAnswer) and answer.routing is not None:
                return answer.routing
            # The thread is changing hands (a run ending, a lease expiring): look again.
            if loop.time() > deadline:
                raise Unavailable(
                    f"thread {thread_id!r} is held by replica {holder.replica}, which does not answer",
                    "REPLICA_UNREACHABLE",
                    retry_after=self.settings.lease_ttl,  # by then its lease has expired or been renewed
                )
            quick = answer is not None or holder.replica == self.ownership.replica_id
            await asyncio.sleep(0.005 if quick else self.ownership.poll_interval)

    async def _route_or_find(self, state: LiveThread, request: RouteRequest) -> Routing | Holder | None:
        """Routes here when this process runs the thread, or it is idle
        everywhere; else who holds it (None: look again)."""
        async with state.lock:
            if state.running is not None:
                return await self._route_here(request)
            holder = await self.ownership.holder(state.thread_id)
            if holder is not None:
                return holder
            if request.run_id:
                raise run_not_active(request.run_id, state.thread_id)
            try:
                # Idle: persist/discard here; a wake takes the thread in start_run.
                return await self._route_here(request)
            except FailedPrecondition as exc:
                if exc.reason != "THREAD_BUSY":
                    raise
                # Lost the race for the thread: deliver to the winner.
                return await self.ownership.holder(state.thread_id)

    async def _route_here(self, request: RouteRequest) -> Routing:
        """Routes into this process's view of the thread. Deliver and wake
        answer only once the signal is committed to the outbox."""
        agent = await self.agents.resolve(request.agent_id, request.tenant)
        # Accepted now, whatever the caller said: the runtime stamps it (a retry gets the first answer).
        signal = replace(request.signal, accepted_at=utcnow())
        resource_id, thread_id, run_id = request.resource_id, request.thread_id, request.run_id
        state = self._state(resource_id, thread_id)
        active = state.running
        if run_id and (active is None or active.run_id != run_id):
            raise run_not_active(run_id, thread_id)
        if active is not None:
            signal = with_delivery_attributes(signal, request.active_attributes)
            on_active = request.if_active or agent.signal_delivery.get(signal.type, "deliver")
            # Another agent's run is never interrupted: the signal waits for it, in a run of its own.
            other_agent = state.agent is not None and state.agent.id != agent.id
            if other_agent and run_id and on_active == "deliver":
                raise thread_busy(thread_id, active.run_id)  # that very run cannot take it
            if request.queue or on_active == "queue" or (other_agent and on_active == "deliver"):
                await self._commit(signal, agent, state)
                options = request.stream_options or (None if other_agent else state.options)
                queued = self._queue(state, agent, signal, options)
                return Routing("deliver", queued.run_id, signal)
            if on_active == "deliver":
                await self._commit(signal, agent, state)
                if not active.deliver(signal):  # the run is past its last model call (or over): a next turn
                    queued = self._queue(state, agent, signal, state.options)
                    return Routing("deliver", queued.run_id, signal)
                self._hold(active.run_id, signal)
                return Routing("deliver", active.run_id, signal)
            if on_active == "persist":
                await self._persist(signal, resource_id, thread_id)
                return Routing("persist", None, signal)
            return Routing("discard", None, signal)
        signal = with_delivery_attributes(signal, request.idle_attributes)
        behavior: IdleBehavior = "wake" if request.queue else request.if_idle
        if behavior == "wake":
            handle = await self.start_run(
                agent,
                [to_db_message(signal)],
                self._options_for(request.stream_options, resource_id, thread_id),
                opening=signal,
                commit=signal,
            )
            # Held like a delivered signal: a process killed mid-run replays it
            # (the run saves its input only when it ends).
            self._hold(handle.run_id, signal)
            try:
                await handle.ready()  # a run that cannot start is a routing failure
            except Exception:  # refused, so never to be replayed
                held = self._outbox.get(handle.run_id, [])
                if signal.id in held:
                    held.remove(signal.id)
                if not signal.transient:
                    await self._release([signal.id])
                raise
            return Routing("wake", handle.run_id, signal)
        if behavior == "persist":
            await self._persist(signal, resource_id, thread_id)
            await self._announce_persisted(state, agent, signal)
            return Routing("persist", None, signal)
        return Routing("discard", None, signal)

    async def _persist(self, signal: Signal, resource_id: str, thread_id: str) -> None:
        if signal.transient:
            return  # transient signals are never stored, whatever the behaviour
        try:
            if await self.storage.get_thread(thread_id) is None:
                await self.storage.save_thread(Thread(thread_id, resource_id))
            await self.storage.save_messages([to_db_message(signal, thread_id, resource_id)])
        except StorageError as exc:
            raise storage_unavailable(exc) from exc

    async def _announce_persisted(self, state: LiveThread, agent: Agent, signal: Signal) -> None:
        """A persisted signal on an idle thread reaches subscribers as a small
        run with no model call: start, the echo, finish."""
        run_id = new_id()
        payloads: tuple[Payload, ...] = (
            Start(agent.id, state.thread_id, state.resource_id),
            SignalEcho(signal),
            Finish("stop", Usage(0, 0, 0), Usage(0, 0, 0)),
        )
        chunks = [Chunk(payload, run_id, seq) for seq, payload in enumerate(payloads, start=1)]
        await self.log.append(state.thread_id, chunks)

    async def delete_thread(self, resource_id: str, thread_id: str) -> bool:
        """Deletes a thread and everything kept for it: its active run is
        aborted, its queued runs and pending signals dropped, its messages and
        its chunk log deleted (a resume into it is RESUME_OFFSET_EXPIRED).
        False when storage had no such thread."""
        with self._using(resource_id, thread_id) as state:
            state.deleting = True  # the run's end starts nothing after it
            self._forget_queue(state)
            try:
                # Aborted, or (past its result) its work for after it cut short, wherever it runs.
                aborted = await self.abort(resource_id, thread_id, stop=True)
                if aborted is not None:
                    await self.settled(aborted)  # its end is logged before the log goes
            finally:
                state.deleting = False
        # Its writes go to their end though the caller leaves: its pending
        # signals dropped while the thread stays would be acknowledged work lost.
        return await to_its_end(self._delete_stored(thread_id), f"deleting thread {thread_id!r}")

    async def _delete_stored(self, thread_id: str) -> bool:
        try:
            pending = [e.signal.id for e in await self.storage.list_pending() if e.thread_id == thread_id]
            if pending:
                await self.storage.delete_pending(pending)
            deleted = await self.storage.delete_thread(thread_id)
        except StorageError as exc:
            raise storage_unavailable(exc) from exc
        await self.log.forget(thread_id)
        return deleted

    # ------------------------------------------------------------ abort and client tools

    async def abort(
        self, resource_id: str, thread_id: str, run_id: str | None = None, *, stop: bool = False
    ) -> str | None:
        """Aborts the thread's active run, wherever it runs; its id, or None when
        none was aborted (a run past its result has nothing to abort). `stop`
        (a deletion): such a run's on_finish work is cut short instead."""
        if self.active_run(resource_id, thread_id) is not None:
            return self._abort_here(resource_id, thread_id, run_id, stop)
        holder = await self.ownership.holder(thread_id)
        if holder is None or holder.replica == self.ownership.replica_id:
            return None
        forwarded = peers.AbortForward(resource_id, thread_id, run_id, stop)
        answer = await self.ownership.forward(holder.replica, forwarded)
        return answer.run_id if isinstance(answer, peers.AbortAnswer) else None

    def _abort_here(self, resource_id: str, thread_id: str, run_id: str | None, stop: bool = False) -> str | None:
        active = self.active_run(resource_id, thread_id)
        if active is None or (run_id and active.run_id != run_id):
            return None
        if stop:
            active.stop("ABORTED", "aborted by request")
            return active.run_id
        return active.run_id if active.abort("ABORTED", "aborted by request") else None

    async def answer_tool(self, run_id: str, tool_call_id: str, result: Any, is_error: bool) -> bool:
        """Hands a client tool's answer to the run waiting for it, wherever it
        runs; False when none waits."""
        run = self.runs.get(run_id)
        if run is not None:
            return run.answer_tool(tool_call_id, result, is_error)
        marker = await self.ownership.locate(run_id)
        if marker is None or marker.replica == self.ownership.replica_id:
            return False
        answer = await self.ownership.forward(marker.replica, peers.ToolForward(run_id, tool_call_id, result, is_error))
        return isinstance(answer, peers.ToolAnswer) and answer.answered

    async def answer_peer(self, request: PeerRequest) -> PeerAnswer:
        """Another replica's request about a thread (or run) this one holds."""
        if isinstance(request, RouteRequest):
            request.check_tenant()  # again here: the replica it came through checked it too
            with self._using(request.resource_id, request.thread_id) as state:
                async with state.lock:
                    if state.running is None:
                        return peers.RouteAnswer(None)
                    return peers.RouteAnswer(await self._route_here(request))
        if isinstance(request, peers.AbortForward):
            return peers.AbortAnswer(
                self._abort_here(request.resource_id, request.thread_id, request.run_id, request.stop)
            )
        run = self.runs.get(request.run_id)
        return peers.ToolAnswer(
            run is not None and run.answer_tool(request.tool_call_id, request.result, request.is_error)
        )

    # ------------------------------------------------------------ subscriptions

    async def subscribe(
        self, resource_id: str, thread_id: str, *, resume_epoch: str | None = None, after_offset: int | None = None
    ) -> tuple[Snapshot, list[Chunk], Subscriber]:
        """The snapshot, the logged chunks to replay, and a live queue, with no
        gap and no duplicate between the replay and the live chunks."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        joined = await self.log.join(thread_id, resume_epoch=resume_epoch, after_offset=after_offset)
        try:
            active = await self.active_run_id(resource_id, thread_id)
        except Unavailable:
            self.log.leave(thread_id, joined.subscriber)
            raise
        return Snapshot(active or "", joined.epoch, joined.last_offset), joined.replay, joined.subscriber

    def unsubscribe(self, resource_id: str, thread_id: str, subscriber: Subscriber) -> None:
        self.log.leave(thread_id, subscriber)


async def _failed_on_storage(handle: RunHandle) -> bool:
    """The run ended because storage failed (in set-up, or saving its result):
    the signals it took are not in the thread."""
    try:
        await handle.ready()
        result = await handle.result()
    except Unavailable as exc:
        return exc.reason == "STORAGE_UNAVAILABLE"
    except Exception:
        return False
    return result.error is not None and result.error.reason == "STORAGE_UNAVAILABLE"
