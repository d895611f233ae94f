"""The Agent, and the handle of a run it starts: `stream()` starts a run and
returns its `RunHandle`, `generate()` runs to completion.

Agent and RunHandle name each other (a handle knows its agent, so a signal
that arrives too late for a run can start the next one), so they share this
module; the loop they start sits below both (agentd.runtime.loop).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Final

from agentd.runtime.agent_definition import AgentDefinition, RunInput, input_to_messages, resolve_dynamic
from agentd.runtime.chunks import Abort, Chunk
from agentd.runtime.loop.agent_loop import AgentLoop, launch
from agentd.runtime.loop.state import RunState
from agentd.runtime.messages import Message, Signal, next_uuid
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.results import RunResult
from agentd.runtime.telemetry import Telemetry

# RunInput and resolve_dynamic are the definition's, exported here as before.
__all__ = ["CALLER_CANCELLED", "Agent", "RunHandle", "RunInput", "drain", "resolve_dynamic", "start_run"]

log = logging.getLogger("agentd.run")

#: How a run ends whose caller went away (reason, message): a call cancelled,
#: or past its deadline.
CALLER_CANCELLED: Final = ("CALLER_CANCELLED", "the caller cancelled the call")


class Agent(AgentDefinition):
    """An agent. Fields typed `Dynamic` may be functions of the request context,
    resolved once per request."""

    def stream(
        self,
        run_input: RunInput,
        options: ExecutionOptions | None = None,
        *,
        run_id: str | None = None,
        telemetry: Telemetry | None = None,
    ) -> RunHandle:
        """Starts a run now and returns its `RunHandle` (async-iterate it for chunks)."""
        messages = input_to_messages(run_input)
        return start_run(self, messages, options or ExecutionOptions(), run_id=run_id, telemetry=telemetry)

    async def generate(self, run_input: RunInput, options: ExecutionOptions | None = None) -> RunResult:
        """Runs to completion and returns the `RunResult`."""
        handle = self.stream(run_input, options)
        await handle.ready()
        return await handle.result()


class RunHandle(RunState):
    """A started run: iterate it for chunks, await `result()` for the full output.

    A run started `in_caller` has no task of its own: `run_to_end()` runs it
    in its caller's task. A cancellation of that task that no `abort` asked
    for is its caller's: the run ends CALLER_CANCELLED, as if the caller had
    aborted it, and `run_to_end()` raises the cancellation again once it has."""

    # Built by `start_run` (the agent set there): RunState's __init__ alone,
    # the rest read from the class until written (no call nor store per field).
    agent: Agent
    #: The run's own task; for a run in its caller's task, that task once it runs there.
    _task: asyncio.Task[RunResult] | None = None
    #: A run in its caller's task: its body until `run_to_end` runs it.
    _body: Coroutine[Any, Any, RunResult] | None = None
    _in_caller = False
    #: A run in its caller's task: how it ended (its result, or what ended it
    #: otherwise), once it has; and the callbacks `when_ended` was given (None: none yet).
    _outcome: RunResult | BaseException | None = None
    _on_end: list[Callable[[object], None]] | None = None
    #: The cancellations `abort` asked of the caller's task (taken back once the run ended).
    _asked = 0

    def deliver(self, signal: Signal) -> bool:
        """Hands a signal to the run; False when it can no longer take one."""
        if self.closed_to_signals or self.done:
            return False
        self.pending_signals.append(signal)
        return True

    async def result(self) -> RunResult:
        if self._in_caller:
            outcome = self._outcome
            if isinstance(outcome, RunResult):
                return outcome
            if outcome is not None:
                raise outcome
            waiter: asyncio.Future[RunResult] = self.loop.create_future()
            # settled as the run returns, or by `run_to_end`
            if self._result_waiters is None:
                self._result_waiters = [waiter]
            else:
                self._result_waiters.append(waiter)
            return await waiter
        task = self._task
        assert task is not None
        if task.done():
            return task.result()
        waiter = self.loop.create_future()
        if self._result_waiters is None:  # a run that ends otherwise than by returning settles its waiters here
            task.add_done_callback(self._settle_from_task)
            self._result_waiters = [waiter]
        else:
            self._result_waiters.append(waiter)
        return await waiter

    async def run_to_end(self) -> RunResult:
        """The run's result once it ended; set-up's error (the caller's mistake)
        raised instead. A run started `in_caller` runs now, in this task."""
        body = self._body
        if body is None:
            await self.ready()
            return await self.result()
        # It runs here, in this task (no coroutine of its own between).
        self._body = None
        task = self._task = asyncio.current_task(self.loop)  # the loop named: no getpid to find it
        assert task is not None
        cancelling = task.cancelling()
        try:
            result = await body
        except BaseException as exc:  # cancelled again while ending: as a task of its own would end
            self._ended(exc)
            self.settle(exc)
            raise
        self._ended(result)
        if self._asked:  # the run's aborts cancelled this task: they are spent
            for _ in range(self._asked):
                task.uncancel()
        if task.cancelling() > cancelling:  # the caller's cancellation, which ended the run
            raise asyncio.CancelledError
        if self._ready_error is not None:  # set-up's error (ready_outcome, without its call)
            raise self._ready_error
        return result

    def _ended(self, outcome: RunResult | BaseException) -> None:
        self._outcome = outcome
        callbacks = self._on_end
        if callbacks is None:
            return
        self._on_end = None
        for callback in callbacks:
            callback(self)

    def when_ended(self, callback: Callable[[object], None]) -> None:
        """Calls `callback` once the run has ended, however it ended."""
        if self._in_caller:
            if self._on_end is None:
                self._on_end = [callback]
            else:
                self._on_end.append(callback)
        else:
            assert self._task is not None
            self._task.add_done_callback(callback)

    def unasked_abort(self) -> Abort:
        if not self._in_caller:
            return super().unasked_abort()
        # Its caller's task was cancelled: by the caller, or by the call's deadline.
        self.abort_reason = Abort(*CALLER_CANCELLED)
        self.cancelled.set()
        return self.abort_reason

    def _settle_from_task(self, task: asyncio.Task[RunResult]) -> None:
        if self._result_waiters is None:  # the run settled them as it returned
            return
        if task.cancelled():
            self.settle(asyncio.CancelledError())
        elif (error := task.exception()) is not None:
            self.settle(error)
        else:
            self.settle(task.result())

    @property
    def done(self) -> bool:
        if self._in_caller:
            return self._outcome is not None
        return self._task is not None and self._task.done()

    def abort(self, reason: str = "ABORTED", message: str = "") -> bool:
        """Aborts the run; it ends with an `abort` chunk. False once it has its
        result (its work for after it runs on: see `stop`), or was aborted
        already."""
        if self.done or self.ended or self.abort_reason is not None or (self._task is None and not self._in_caller):
            return False
        self.abort_reason = Abort(reason, message or f"run aborted ({reason})")
        self.cancelled.set()
        if self.started:  # else its first step sees abort_reason (a cancel now would skip its ending)
            assert self._task is not None
            self._task.cancel()
            self._asked += 1
        return True

    def stop(self, reason: str, message: str) -> None:
        """Aborts the run or, once it has its result (which stands: the stream
        still closes), cuts its work for after it (on_finish) short: for the
        server's own endings (shutdown, a lost lease, a deleted thread), which
        leave nothing of the run going."""
        if self.abort(reason, message) or not self.ended or self.done or self._task is None:
            return
        self.stopping = True
        self._task.cancel()
        self._asked += 1

    def __aiter__(self) -> AsyncIterator[Chunk]:
        if not self.keeps_chunks:
            raise RuntimeError(f"run {self.run_id} keeps no chunks: its caller runs it to the end (run_to_end)")
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Chunk]:
        async for batch in self.buffer.batches():
            for chunk in batch:
                yield chunk


def start_run(
    agent: Agent,
    messages: list[Message],
    options: ExecutionOptions,
    *,
    run_id: str | None = None,
    parent_run_id: str | None = None,
    telemetry: Telemetry | None = None,
    in_caller: bool = False,
) -> RunHandle:
    """Starts a run in a task of its own; `in_caller`: for its caller to run in
    its own task (`RunHandle.run_to_end`), saving the loop turns a task takes."""
    handle = RunHandle(run_id or next_uuid())  # (new_id(), without its frame)
    handle.agent = agent
    if telemetry is None:
        telemetry = Telemetry()
    if in_caller:
        handle._in_caller = True
        handle.keeps_chunks = False  # its caller reads its result alone
        handle._body = AgentLoop(handle, agent, messages, options, parent_run_id, telemetry).execute()
    else:
        handle._task = launch(handle, agent, messages, options, parent_run_id=parent_run_id, telemetry=telemetry)
    return handle


async def drain(handle: RunHandle) -> None:
    """Waits for a run to end, ignoring how."""
    try:
        await handle.result()
    except Exception:
        log.debug("run %s ended with an error", handle.run_id)
