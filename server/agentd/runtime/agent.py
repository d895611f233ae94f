"""The Agent, and the handle of a run it starts: `stream()` starts a run and
returns its `RunHandle`, `generate()` runs to completion.

Agent and RunHandle name each other (a handle knows its agent, so a signal
that arrives too late for a run can start the next one), so they share this
module; the loop they start sits below both (agentd.runtime.loop).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from agentd.runtime.agent_definition import AgentDefinition, RunInput, input_to_messages, resolve_dynamic
from agentd.runtime.chunks import Abort, Chunk
from agentd.runtime.loop.agent_loop import launch
from agentd.runtime.loop.state import RunState
from agentd.runtime.messages import Message, Signal, new_id
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.results import RunResult
from agentd.runtime.telemetry import Telemetry

# RunInput and resolve_dynamic are the definition's, exported here as before.
__all__ = ["Agent", "RunHandle", "RunInput", "drain", "resolve_dynamic", "start_run"]

log = logging.getLogger("agentd.run")


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
    """A started run: iterate it for chunks, await `result()` for the full output."""

    def __init__(self, run_id: str, agent: Agent) -> None:
        super().__init__(run_id)
        self.agent = agent
        self._task: asyncio.Task[RunResult] | None = None

    def deliver(self, signal: Signal) -> bool:
        """Hands a signal to the run; False when it can no longer take one."""
        if self.closed_to_signals or self.done:
            return False
        self.pending_signals.append(signal)
        return True

    async def result(self) -> RunResult:
        task = self._task
        assert task is not None
        if task.done():
            return task.result()
        waiter: asyncio.Future[RunResult] = self.loop.create_future()
        if not self._result_waiters:  # a run that ends otherwise than by returning settles its waiters here
            task.add_done_callback(self._settle_from_task)
        self._result_waiters.append(waiter)
        return await waiter

    def _settle_from_task(self, task: asyncio.Task[RunResult]) -> None:
        waiters, self._result_waiters = self._result_waiters, []
        for waiter in waiters:
            if waiter.done():
                continue
            if task.cancelled():
                waiter.cancel()
            elif (error := task.exception()) is not None:
                waiter.set_exception(error)
            else:
                waiter.set_result(task.result())

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def abort(self, reason: str = "ABORTED", message: str = "") -> bool:
        """Aborts the run; it ends with an `abort` chunk. False when already done."""
        if self._task is None or self._task.done() or self.abort_reason is not None:
            return False
        self.abort_reason = Abort(reason, message or f"run aborted ({reason})")
        self.cancelled.set()
        if self.started:  # else its first step sees abort_reason (a cancel now would skip its ending)
            self._task.cancel()
        return True

    def __aiter__(self) -> AsyncIterator[Chunk]:
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
) -> RunHandle:
    handle = RunHandle(run_id or new_id(), agent)
    handle._task = launch(
        handle, agent, messages, options, parent_run_id=parent_run_id, telemetry=telemetry or Telemetry()
    )
    return handle


async def drain(handle: RunHandle) -> None:
    """Waits for a run to end, ignoring how."""
    try:
        await handle.result()
    except Exception:
        log.debug("run %s ended with an error", handle.run_id)
