"""What a run's parts share while it runs: RunState between the loop and the
run's caller, LoopContext between the loop and its model and tool calls."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agentd.runtime.background import BackgroundWork
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.chunks import Abort, Payload
from agentd.runtime.messages import Signal
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.processors.runner import ProcessorRunner
from agentd.runtime.results import StepResult
from agentd.runtime.telemetry import RunTrace

#: Seconds a run's on_finish callbacks may take in all ([server] on_finish_timeout_seconds).
DEFAULT_ON_FINISH_TIMEOUT = 60.0


class RunState:
    """The chunk buffer, the cancel flag, set-up's outcome, signals waiting for
    the next model call and client tool calls waiting for their answer. The
    loop writes it; its caller reads it through agent.RunHandle."""

    # What a run starts with and most runs keep, read from the class until
    # written (a store per field per run saved); containers that most runs
    # never fill are made on first use.
    #: Set-up's outcome once recorded (set_ready): passed, or the caller's mistake.
    _ready_done = False
    _ready_error: BaseException | None = None
    #: Why the run was aborted, once it was (the run ends with this chunk).
    abort_reason: Abort | None = None
    #: Set by the run's first step: a task cancelled before it never runs
    #: its body, so an abort before then is left for that first step.
    started = False
    #: Set once the run will call the model no more: later signals need a new run.
    closed_to_signals = False
    #: Set once the run has its result (its work for after it may still run):
    #: an abort then has nothing to abort.
    ended = False
    #: Set when the server ends the run itself (RunHandle.stop: shutdown, a
    #: lost lease, a deleted thread): the one cancellation that cuts the work
    #: for after the run short. Any other (a Generate's caller gone) lets it finish.
    stopping = False
    #: Its chunks go into `buffer` for readers to follow. A run its caller runs
    #: to the end (a Generate without a thread) has no reader: it makes none of
    #: its own chunks, only the payloads its output processors see.
    keeps_chunks = True
    #: Client tool calls waiting for the caller's answer, by tool call id (None: none yet).
    _client_calls: dict[str, asyncio.Future[tuple[Any, bool]]] | None = None
    #: How long a client tool call waits for its answer.
    client_tool_timeout = 120.0
    #: How long the run's work for after it (its on_finish callbacks, all of
    #: them) may take before the rest is cut short: until it ends, a thread's
    #: run holds its thread and a Generate's caller waits.
    on_finish_timeout = DEFAULT_ON_FINISH_TIMEOUT
    #: Where its background tool calls run (the host's; None: in the foreground).
    background: BackgroundWork | None = None
    # Each caller waiting for set-up or the result waits on a future of its
    # own (its cancellation cancels that alone, as a shield would), set
    # directly when the outcome is known: a shield takes a loop turn more.
    # (None: no caller waits; a Generate run in its caller's task has none.)
    _ready_waiters: list[asyncio.Future[None]] | None = None
    _result_waiters: list[asyncio.Future[Any]] | None = None

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.buffer = ChunkBuffer()
        self.cancelled = asyncio.Event()
        #: The loop the run runs on (asked once: each get_running_loop is a getpid call).
        self.loop = asyncio.get_running_loop()
        #: Signals delivered into this run; it takes them at its next model boundary.
        self.pending_signals: list[Signal] = []
        #: Signals to echo as the run starts (the signal that woke it).
        self.opening_signals: list[Signal] = []

    def unasked_abort(self) -> Abort:
        """How a run ends that was cancelled without an `abort`: its task was
        cancelled by whoever holds it (a calling run's, in a task of its own)."""
        return Abort("ABORTED", "run cancelled")

    def raise_if_cancelled(self) -> None:
        """Raises CancelledError once the run was aborted: a wait that ended on
        the abort may have swallowed the task's cancellation (asyncio.wait_for
        does on Python 3.11), and an aborted run must call no model again."""
        if self.cancelled.is_set():
            raise asyncio.CancelledError

    def answer_tool(self, tool_call_id: str, result: Any, is_error: bool = False) -> bool:
        """Answers a client tool call; False when no such call is waiting."""
        waiting = None if self._client_calls is None else self._client_calls.get(tool_call_id)
        if waiting is None or waiting.done():
            return False
        waiting.set_result((result, is_error))
        return True

    def expect_client_tool(self, tool_call_id: str) -> None:
        """Registers a client tool call before its chunk goes out, so an answer
        that arrives before the run starts waiting is kept."""
        calls = self._client_calls
        if calls is None:
            calls = self._client_calls = {}
        calls.setdefault(tool_call_id, asyncio.get_running_loop().create_future())

    async def await_client_tool(self, tool_call_id: str) -> Any:
        self.expect_client_tool(tool_call_id)
        calls = self._client_calls
        assert calls is not None
        waiting = calls[tool_call_id]
        try:
            result, is_error = await asyncio.wait_for(waiting, self.client_tool_timeout)
        except TimeoutError:
            raise RuntimeError(f"the client did not answer within {self.client_tool_timeout:g}s") from None
        finally:
            calls.pop(tool_call_id, None)
        if is_error:
            raise RuntimeError(str(result))
        return result

    def set_ready(self, error: BaseException | None = None) -> bool:
        """Records that set-up passed (or failed with `error`, the caller's
        mistake); False when it was already recorded."""
        if self._ready_done:
            return False
        self._ready_done = True
        if error is not None:
            self._ready_error = error
        waiters = self._ready_waiters
        if waiters is None:
            return True
        self._ready_waiters = None
        for waiter in waiters:
            if waiter.done():  # its caller was cancelled
                continue
            if error is None:
                waiter.set_result(None)
            else:
                waiter.set_exception(error)
        return True

    def ready_outcome(self) -> None:
        """Raises set-up's error (the caller's mistake), if it failed."""
        if self._ready_error is not None:
            raise self._ready_error

    async def ready(self) -> None:
        """Returns once the run has passed set-up; raises the caller's mistake
        (an `AgentdError`) when set-up failed, before any chunk is worth reading."""
        if self._ready_done:
            return self.ready_outcome()
        waiter: asyncio.Future[None] = self.loop.create_future()
        if self._ready_waiters is None:
            self._ready_waiters = [waiter]
        else:
            self._ready_waiters.append(waiter)
        await waiter

    def settle(self, outcome: Any) -> None:
        """Hands how the run ended to the callers waiting for its result: its
        result as the run returns it (the task's own done callbacks come a loop
        turn later), or the exception or cancellation that ended it otherwise."""
        waiters = self._result_waiters
        if waiters is None:
            return
        self._result_waiters = None
        for waiter in waiters:
            if waiter.done():  # its caller was cancelled
                continue
            if isinstance(outcome, asyncio.CancelledError):
                waiter.cancel()
            elif isinstance(outcome, BaseException):
                waiter.set_exception(outcome)
            else:
                waiter.set_result(outcome)


@dataclass(slots=True)
class LoopContext:
    """One run's pieces that its model call and tool calls work with (set
    once; not frozen only because a frozen dataclass's __init__ costs a call per field)."""

    state: RunState
    runner: ProcessorRunner
    message_list: MessageList
    #: The run's finished steps (RunResult.steps): appended to as steps end.
    steps: list[StepResult]
    trace: RunTrace
    #: Emits a payload through the output processors; returns the payloads that went out.
    emit_processed: Callable[[Payload], Awaitable[list[Payload]]]
    #: Emits a payload past them (what emit_processed does when the lane has no stream processor).
    emit_unprocessed: Callable[[Payload], None]
