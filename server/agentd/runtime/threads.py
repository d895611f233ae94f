"""Live threads: which run owns each thread, signal routing, queued runs, the
thread's chunk log with offsets, and its subscribers.

One ThreadRuntime per process. Everything that decides who owns a thread
happens without an `await` in between, so two senders racing on an idle thread
produce exactly one wake: the second sees the first's run and is delivered
into it. Several replicas on one Redis use `ReplicatedThreads`
(runtime/replicas.py), which overrides the async hooks here (`start_run`,
`_write`, `_after_run`, `subscribe`, ...) to run each thread under its lease.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from agentd.runtime.chunks import Chunk, Finish, Payload, SignalEcho, Start, Usage
from agentd.runtime.errors import FailedPrecondition, InvalidArgument, NotFound, OutOfRange, Unavailable
from agentd.runtime.messages import new_id
from agentd.runtime.options import ExecutionOptions, MemoryOptions, ThreadRef
from agentd.runtime.signals import AttributesInput, Signal, to_db_message, with_delivery_attributes
from agentd.runtime.storage import PendingSignal, Storage, Thread

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent
    from agentd.runtime.registry import RunRegistry
    from agentd.runtime.run import RunHandle

log = logging.getLogger("agentd.threads")

ActiveBehavior = Literal["deliver", "persist", "discard"]
IdleBehavior = Literal["wake", "persist", "discard"]
#: Chunks kept per thread for resuming subscribers.
DEFAULT_LOG_RETENTION = 10_000
#: Chunks a subscriber may lag before it is told it fell behind.
DEFAULT_SUBSCRIBER_BUFFER = 1024


@dataclass(frozen=True)
class Routing:
    """The routing decision: wake/deliver carry the run id."""

    action: Literal["wake", "deliver", "persist", "discard", "skipped_unchanged"]
    run_id: str | None = None
    signal: Signal | None = None

    def to_wire(self) -> dict[str, Any]:
        """As a plain dict (a stored retry answer, another replica's reply)."""
        return {"action": self.action, "run_id": self.run_id, "signal": self.signal}

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> Routing:
        return cls(wire["action"], wire.get("run_id"), wire.get("signal"))


@dataclass(frozen=True, kw_only=True)
class RouteRequest:
    """One signal to route into a thread: what SendMessage, QueueMessage,
    SendSignal, Connect frames and notification delivery all come down to."""

    agent_id: str
    signal: Signal
    resource_id: str
    thread_id: str
    #: What to do when the thread has an active run.
    if_active: ActiveBehavior = "deliver"
    #: What to do when the thread is idle.
    if_idle: IdleBehavior = "wake"
    #: Attributes merged into the signal on each path (scalar values only).
    active_attributes: AttributesInput = None
    idle_attributes: AttributesInput = None
    #: Options of the run a wake starts (or of a queued run).
    stream_options: ExecutionOptions | None = None
    #: Only into this active run (NOT_FOUND when it is not the thread's active run).
    run_id: str | None = None
    #: QueueMessage: always a run of its own, after the active one.
    queue: bool = False

    @property
    def idempotency_key(self) -> tuple[str, ...]:
        """What makes two routing requests the same request (a retry)."""
        return (
            self.agent_id,
            self.resource_id,
            self.thread_id,
            self.run_id or "",
            self.signal.id,
            "q" if self.queue else "s",
        )


@dataclass
class _Queued:
    agent: Agent
    signal: Signal
    run_id: str
    options: ExecutionOptions


class Subscriber:
    """One subscription's bounded queue of logged chunks."""

    def __init__(self, buffer: int) -> None:
        self.buffer = buffer
        #: Chunks at or below this offset were already replayed: not pushed again.
        self.after = 0
        self.queue: deque[Chunk] = deque()
        self.fell_behind = False
        self.closed = False
        self._wake = asyncio.Event()

    def push(self, chunk: Chunk) -> None:
        if self.fell_behind or self.closed or chunk.offset <= self.after:
            return
        if len(self.queue) >= self.buffer:
            # Never block the run or other subscribers: this one resumes by offset.
            self.fell_behind = True
        else:
            self.queue.append(chunk)
        self._wake.set()

    def close(self) -> None:
        self.closed = True
        self._wake.set()

    async def wait(self) -> None:
        await self._wake.wait()
        self._wake.clear()


@dataclass
class _Thread:
    key: tuple[str, str]
    epoch: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: Offsets start from the wall clock in microseconds: never reused across restarts.
    next_offset: int = field(default_factory=lambda: time.time_ns() // 1000)
    log: deque[Chunk] = field(default_factory=deque)
    #: The highest offset no longer in the log (0: nothing dropped yet).
    dropped_until: int = 0
    active: RunHandle | None = None
    agent: Agent | None = None
    options: ExecutionOptions | None = None
    queue: deque[_Queued] = field(default_factory=deque)
    subscribers: set[Subscriber] = field(default_factory=set)
    #: Replicas only: serialises routing decisions that await the lease.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Replicas only: the thread's lease while this process holds it, and the run it names.
    keeper: Any = None
    lease_run: str | None = None

    @property
    def last_offset(self) -> int:
        return self.log[-1].offset if self.log else 0


def run_not_active(run_id: str, thread_id: str) -> NotFound:
    return NotFound(f"run {run_id!r} is not active on thread {thread_id!r}", "RUN_NOT_FOUND", {"run_id": run_id})


def thread_busy(thread_id: str, run_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        f"thread {thread_id!r} has an active run; queue the message or subscribe to the thread",
        "THREAD_BUSY",
        {"thread_id": thread_id, "run_id": run_id},
    )


class ThreadRuntime:
    def __init__(
        self,
        runs: RunRegistry,
        storage: Storage,
        *,
        log_retention: int = DEFAULT_LOG_RETENTION,
        subscriber_buffer: int = DEFAULT_SUBSCRIBER_BUFFER,
        client_tool_timeout: float = 120.0,
    ) -> None:
        self.runs = runs
        self.storage = storage
        self.log_retention = log_retention
        self.subscriber_buffer = subscriber_buffer
        #: How long a run waits for a client tool's answer before the model sees a tool error.
        self.client_tool_timeout = client_tool_timeout
        self._threads: dict[str, _Thread] = {}
        self._idempotent: dict[tuple[str, ...], Routing] = {}
        self._closed = False
        #: Acknowledged signals not yet through a finished run, by the run that holds them.
        self._outbox: dict[str, list[str]] = {}
        #: Outbox writes in flight, so a run that ends meanwhile waits for them.
        self._commits: dict[str, asyncio.Task[None]] = {}
        #: Agents by id, for runs recovered after a restart.
        self.agents: Any = None
        #: Each thread-bound run's logging task, by run id (it ends after the run and its hand-over).
        self._pumps: dict[str, asyncio.Task[None]] = {}

    def _thread(self, resource_id: str, thread_id: str) -> _Thread:
        # Keyed by thread id alone: storage keeps thread ids unique across
        # resources and a run never binds to another resource's thread.
        state = self._threads.get(thread_id)
        if state is None:
            state = self._threads[thread_id] = _Thread((resource_id, thread_id))
        return state

    async def thread_of_run(self, run_id: str) -> tuple[str, str] | None:
        """(resource id, thread id) of an active run."""
        return self._local_thread_of_run(run_id)

    def _local_thread_of_run(self, run_id: str) -> tuple[str, str] | None:
        for state in self._threads.values():
            if state.active is not None and state.active.run_id == run_id and not state.active.done:
                return state.key
        return None

    def active_run(self, resource_id: str, thread_id: str) -> RunHandle | None:
        state = self._threads.get(thread_id)
        if state is None or state.active is None or state.active.done:
            return None
        return state.active

    async def settled(self, run_id: str) -> None:
        """Returns once a thread-bound run's chunks are logged and its thread is
        handed on (to the next queued run) or free: what the run's caller waits
        for before answering, so its next call on the thread finds it idle."""
        pump = self._pumps.get(run_id)
        if pump is not None:
            await asyncio.wait([pump])  # its failures are logged there, not the caller's

    async def active_run_id(self, resource_id: str, thread_id: str) -> str | None:
        """The id of the thread's active run, wherever it runs."""
        active = self.active_run(resource_id, thread_id)
        return active.run_id if active is not None else None

    async def answer_tool(self, run_id: str, tool_call_id: str, result: Any, is_error: bool) -> bool:
        """Hands a client tool's answer to the run waiting for it; False when none waits."""
        run = self.runs.get(run_id)
        return run is not None and run.answer_tool(tool_call_id, result, is_error)

    # ------------------------------------------------------------ runs

    async def start_run(
        self,
        agent: Agent,
        run_input: Any,
        options: ExecutionOptions,
        *,
        run_id: str | None = None,
        opening: Signal | None = None,
    ) -> RunHandle:
        """Starts a thread-bound run (the thread must be idle) and logs its chunks."""
        return self._launch(agent, run_input, options, run_id=run_id, opening=opening)

    def _launch(
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
        state = self._thread(memory.resource or "", memory.thread.id)
        if state.active is not None and not state.active.done:
            raise thread_busy(memory.thread.id, state.active.run_id)
        handle = self.runs.start(agent, run_input, options, run_id=run_id)
        handle.client_tool_timeout = self.client_tool_timeout
        if opening is not None:
            handle.opening_signals.append(opening)
        state.active, state.agent, state.options = handle, agent, options
        pump = asyncio.get_running_loop().create_task(self._pump(state, handle), name=f"log {handle.run_id}")
        self._pumps[handle.run_id] = pump
        pump.add_done_callback(lambda _: self._pumps.pop(handle.run_id, None))
        return handle

    async def _pump(self, state: _Thread, handle: RunHandle) -> None:
        try:
            async for batch in handle.buffer.batches():
                await self._write(state, batch)
        finally:
            if state.active is handle:
                state.active = None
            # Signals delivered too late for this run get their own run, in order.
            leftover = list(handle.pending_signals)
            handle.pending_signals.clear()
            held = self._outbox.pop(handle.run_id, [])
            for signal in leftover:
                self._queue(state, state.agent or handle.agent, signal, state.options)
            taken = [s for s in held if s not in {x.id for x in leftover}]
            await self._release(taken)
            await self._after_run(state, handle)

    async def _write(self, state: _Thread, chunks: list[Chunk]) -> None:
        """Logs chunks to the thread (and its subscribers)."""
        for chunk in chunks:
            self._log(state, chunk)

    async def _after_run(self, state: _Thread, handle: RunHandle) -> None:
        """The thread's run ended (its queued leftovers already queued): what next."""
        await self._next(state)

    async def _release(self, signal_ids: list[str]) -> None:
        """Drops signals from the outbox once the run that took them ended."""
        if not signal_ids:
            return
        await asyncio.gather(*(self._commits[s] for s in signal_ids if s in self._commits), return_exceptions=True)
        try:
            await self.storage.delete_pending(signal_ids)
        except Exception:
            log.exception("could not clear %d delivered signal(s) from the outbox", len(signal_ids))

    def _hold(
        self, run_id: str, signal: Signal, agent: Agent, resource_id: str, thread_id: str
    ) -> asyncio.Task[None] | None:
        """Marks a signal as held by a run and starts committing it to the outbox
        (the answer waits for that commit). Transient signals are never stored."""
        if signal.transient:
            return None
        self._outbox.setdefault(run_id, []).append(signal.id)
        if signal.id not in self._commits:
            entry = PendingSignal(signal, agent.id, resource_id, thread_id)
            task = asyncio.get_running_loop().create_task(self.storage.save_pending(entry))
            self._commits[signal.id] = task
            task.add_done_callback(lambda _: self._commits.pop(signal.id, None))
            return task
        return self._commits[signal.id]

    def _queue(self, state: _Thread, agent: Agent, signal: Signal, options: ExecutionOptions | None) -> _Queued:
        resource_id, thread_id = state.key
        queued = _Queued(agent, signal, new_id(), self._options_for(options, resource_id, thread_id))
        state.queue.append(queued)
        self._hold(queued.run_id, signal, agent, resource_id, thread_id)
        return queued

    async def recover(self) -> int:
        """Replays acknowledged signals that no finished run took (the previous
        process stopped first): each thread's, in order, one run at a time."""
        entries = await self.storage.list_pending()
        for entry in entries:
            try:
                agent = self.agents.get(entry.agent_id)
            except Exception:
                log.warning("dropping a pending signal for unknown agent %r", entry.agent_id)
                await self.storage.delete_pending([entry.signal.id])
                continue
            state = self._thread(entry.resource_id, entry.thread_id)
            queued = _Queued(agent, entry.signal, new_id(), self._options_for(None, entry.resource_id, entry.thread_id))
            state.queue.append(queued)
            self._outbox.setdefault(queued.run_id, []).append(entry.signal.id)
        for state in list(self._threads.values()):
            await self._next(state)
        return len(entries)

    def _log(self, state: _Thread, chunk: Chunk) -> None:
        logged = replace(chunk, offset=state.next_offset)
        state.next_offset += 1
        state.log.append(logged)
        while len(state.log) > self.log_retention:
            state.dropped_until = state.log.popleft().offset
        for subscriber in list(state.subscribers):
            subscriber.push(logged)

    async def _next(self, state: _Thread) -> None:
        """Starts the next queued run, one at a time, in order."""
        while state.queue and state.active is None and not self._closed:
            item = state.queue.popleft()
            try:
                await self.start_run(
                    item.agent, [to_db_message(item.signal)], item.options, run_id=item.run_id, opening=item.signal
                )
            except Exception:
                log.exception("queued run %s could not start", item.run_id)

    # ------------------------------------------------------------ routing

    def _options_for(self, options: ExecutionOptions | None, resource_id: str, thread_id: str) -> ExecutionOptions:
        # A woken run's memory always comes from the target's ids.
        return replace(options or ExecutionOptions(), memory=MemoryOptions(resource_id, ThreadRef(thread_id)))

    async def route(self, request: RouteRequest) -> Routing:
        """Routes a signal into a thread; the answer is sent once it is decided
        (and, for deliver and persist of a stored signal, once it is committed)."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        idem = request.idempotency_key
        if idem in self._idempotent:
            return self._idempotent[idem]
        agent = self.agents.get(request.agent_id)
        signal, resource_id, thread_id, run_id = request.signal, request.resource_id, request.thread_id, request.run_id
        queue, stream_options = request.queue, request.stream_options
        state = self._thread(resource_id, thread_id)
        active = state.active if state.active is not None and not state.active.done else None
        if run_id and (active is None or active.run_id != run_id):
            raise run_not_active(run_id, thread_id)
        routing: Routing
        if active is not None:
            signal = with_delivery_attributes(signal, request.active_attributes)
            if queue:
                queued = self._queue(state, agent, signal, stream_options or state.options)
                routing = Routing("deliver", queued.run_id, signal)
            elif request.if_active == "deliver":
                if state.agent is not None and state.agent.id != agent.id:
                    raise thread_busy(thread_id, active.run_id)
                if not active.deliver(signal):  # the run is past its last model call: a next turn
                    queued = self._queue(state, agent, signal, state.options)
                    routing = Routing("deliver", queued.run_id, signal)
                else:
                    self._hold(active.run_id, signal, agent, resource_id, thread_id)
                    routing = Routing("deliver", active.run_id, signal)
            elif request.if_active == "persist":
                await self._persist(signal, resource_id, thread_id)
                routing = Routing("persist", None, signal)
            else:
                routing = Routing("discard", None, signal)
        else:
            signal = with_delivery_attributes(signal, request.idle_attributes)
            behavior: IdleBehavior = "wake" if queue else request.if_idle
            if behavior == "wake":
                handle = await self.start_run(
                    agent,
                    [to_db_message(signal)],
                    self._options_for(stream_options, resource_id, thread_id),
                    opening=signal,
                )
                # Held like a delivered signal: a process killed mid-run replays it
                # (the run saves its input only when it ends).
                self._hold(handle.run_id, signal, agent, resource_id, thread_id)
                await handle.ready()  # a run that cannot start is a routing failure
                routing = Routing("wake", handle.run_id, signal)
            elif behavior == "persist":
                await self._persist(signal, resource_id, thread_id)
                await self._announce_persisted(state, agent, signal)
                routing = Routing("persist", None, signal)
            else:
                routing = Routing("discard", None, signal)
        commit = self._commits.get(signal.id)
        if commit is not None and routing.action in ("deliver", "wake"):
            await asyncio.shield(commit)  # nothing acknowledged is lost: answer after the commit
        self._idempotent[idem] = routing
        if len(self._idempotent) > 10_000:  # bounded: a retry comes soon or not at all
            for key in list(self._idempotent)[:1000]:
                del self._idempotent[key]
        return routing

    async def _persist(self, signal: Signal, resource_id: str, thread_id: str) -> None:
        if signal.transient:
            return  # transient signals are never stored, whatever the behaviour
        if await self.storage.get_thread(thread_id) is None:
            await self.storage.save_thread(Thread(thread_id, resource_id))
        await self.storage.save_messages([to_db_message(signal, thread_id, resource_id)])

    async def _announce_persisted(self, state: _Thread, agent: Agent, signal: Signal) -> None:
        """A persisted signal on an idle thread reaches subscribers as a small
        run with no model call: start, the echo, finish."""
        run_id = new_id()
        resource_id, thread_id = state.key
        payloads: tuple[Payload, ...] = (
            Start(agent.id, thread_id, resource_id),
            SignalEcho(signal),
            Finish("stop", Usage(0, 0, 0), Usage(0, 0, 0)),
        )
        await self._write(state, [Chunk(payload, run_id, seq) for seq, payload in enumerate(payloads, start=1)])

    # ------------------------------------------------------------ abort

    async def abort(self, resource_id: str, thread_id: str, run_id: str | None = None) -> str | None:
        """Aborts the thread's active run; its id, or None when none was aborted."""
        active = self.active_run(resource_id, thread_id)
        if active is None or (run_id and active.run_id != run_id):
            return None
        return active.run_id if active.abort("ABORTED", "aborted by request") else None

    # ------------------------------------------------------------ subscriptions

    @dataclass
    class Snapshot:
        active_run_id: str
        log_epoch: str
        last_offset: int

    def snapshot(self, resource_id: str, thread_id: str) -> ThreadRuntime.Snapshot:
        state = self._thread(resource_id, thread_id)
        active = self.active_run(resource_id, thread_id)
        return ThreadRuntime.Snapshot(active.run_id if active else "", state.epoch, state.last_offset)

    async def subscribe(
        self, resource_id: str, thread_id: str, *, resume_epoch: str | None = None, after_offset: int | None = None
    ) -> tuple[ThreadRuntime.Snapshot, list[Chunk], Subscriber]:
        """The snapshot, the logged chunks to replay, and a live queue, with no
        gap and no duplicate between the replay and the live chunks."""
        if self._closed:
            raise Unavailable("the server is shutting down", "SERVER_SHUTDOWN")
        state = self._thread(resource_id, thread_id)
        replay: list[Chunk] = []
        if resume_epoch is not None:
            after = after_offset or 0
            if resume_epoch != state.epoch or after < state.dropped_until:
                raise OutOfRange(
                    "the thread's chunk log no longer holds that point; list the messages and subscribe again",
                    "RESUME_OFFSET_EXPIRED",
                    {"log_epoch": state.epoch, "dropped_until": str(state.dropped_until)},
                )
            if after > state.last_offset and state.log:
                raise InvalidArgument.field("resume.after_offset", "is beyond the last offset of the thread's log")
            replay = [c for c in state.log if c.offset > after]
        subscriber = Subscriber(self.subscriber_buffer)
        state.subscribers.add(subscriber)  # no await since the replay was read: nothing in between
        return self.snapshot(resource_id, thread_id), replay, subscriber

    def unsubscribe(self, resource_id: str, thread_id: str, subscriber: Subscriber) -> None:
        state = self._threads.get(thread_id)
        if state is not None:
            state.subscribers.discard(subscriber)
        subscriber.close()

    async def shutdown(self, grace: float = 5.0) -> None:
        """Ends every subscription (their streams answer UNAVAILABLE), and waits
        up to `grace` seconds for the runs' logs to be written (the runs were
        ended first: RunRegistry.shutdown)."""
        self._closed = True
        for state in self._threads.values():
            state.queue.clear()
            for subscriber in list(state.subscribers):
                subscriber.close()
        if self._pumps:
            await asyncio.wait(list(self._pumps.values()), timeout=grace)


async def follow(subscriber: Subscriber) -> AsyncIterator[list[Chunk]]:
    """Batches of live chunks until the subscriber closes or falls behind."""
    while True:
        if subscriber.queue:
            batch = list(subscriber.queue)
            subscriber.queue.clear()
            yield batch
            continue
        if subscriber.fell_behind or subscriber.closed:
            return
        await subscriber.wait()
