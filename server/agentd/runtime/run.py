"""The agent loop: one run of an agent, streamed as chunks into a ChunkBuffer."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.chunks import (
    Abort,
    Chunk,
    Error,
    Finish,
    FinishReason,
    Payload,
    ReasoningDelta,
    Start,
    StepFinish,
    StepStart,
    TextDelta,
    ToolCall,
    ToolResult,
    Tripwire,
    Usage,
)
from agentd.runtime.errors import AgentdError
from agentd.runtime.messages import (
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    new_id,
)
from agentd.runtime.models.base import ModelAPIError, ModelFinish, ModelRequest, ToolDefinition
from agentd.runtime.models.router import resolve_model
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.tools import Tool, ToolContext

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent

log = logging.getLogger("agentd.run")


@dataclass(slots=True)
class StepResult:
    step_number: int
    text: str = ""
    reasoning_text: str = ""
    finish_reason: FinishReason = "unknown"
    raw_finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCallPart] = field(default_factory=list)
    tool_results: list[ToolResultPart] = field(default_factory=list)
    model: str = ""
    tripwire: Tripwire | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RunResult:
    """The full output of a run (what Generate returns)."""

    run_id: str
    agent_id: str
    text: str = ""
    reasoning_text: str = ""
    finish_reason: FinishReason = "unknown"
    raw_finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    total_usage: Usage = field(default_factory=Usage)
    steps: list[StepResult] = field(default_factory=list)
    response_messages: list[Message] = field(default_factory=list)
    object: Any = None
    tripwire: Tripwire | None = None
    model: str = ""
    warnings: list[str] = field(default_factory=list)
    thread_id: str | None = None
    resource_id: str | None = None
    #: Set when the run failed (the stream's error chunk).
    error: Error | None = None
    #: Set when the run was aborted (the stream's abort chunk).
    aborted: Abort | None = None

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [c for s in self.steps for c in s.tool_calls]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [r for s in self.steps for r in s.tool_results]


class RunHandle:
    """A started run: iterate it for chunks, await `result()` for the full output."""

    def __init__(self, run_id: str, agent: Agent) -> None:
        self.run_id = run_id
        self.agent = agent
        self.buffer = ChunkBuffer()
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[RunResult] | None = None
        self._abort_reason: Abort | None = None

    async def ready(self) -> None:
        """Returns once the run has passed set-up; raises the caller's mistake
        (an `AgentdError`) when set-up failed, before any chunk is worth reading."""
        await asyncio.shield(self._ready)

    async def result(self) -> RunResult:
        assert self._task is not None
        return await asyncio.shield(self._task)

    @property
    def done(self) -> bool:
        return self._task is not None and self._task.done()

    def abort(self, reason: str = "ABORTED", message: str = "") -> bool:
        """Aborts the run; it ends with an `abort` chunk. False when already done."""
        if self._task is None or self._task.done() or self._abort_reason is not None:
            return False
        self._abort_reason = Abort(reason, message or f"run aborted ({reason})")
        self._task.cancel()
        return True

    def __aiter__(self) -> AsyncIterator[Chunk]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Chunk]:
        async for batch in self.buffer.batches():
            for chunk in batch:
                yield chunk


def start_run(
    agent: Agent, messages: list[Message], options: ExecutionOptions, *, run_id: str | None = None
) -> RunHandle:
    handle = RunHandle(run_id or new_id(), agent)
    loop = _AgentLoop(handle, messages, options)
    handle._task = asyncio.get_running_loop().create_task(loop.execute(), name=f"run {handle.run_id}")
    return handle


class _AgentLoop:
    def __init__(self, handle: RunHandle, messages: list[Message], options: ExecutionOptions) -> None:
        self.handle = handle
        self.agent = handle.agent
        self.input = messages
        self.call_options = options
        self.seq = 0
        self.result = RunResult(run_id=handle.run_id, agent_id=handle.agent.id)

    def emit(self, payload: Payload) -> None:
        self.seq += 1
        self.handle.buffer.append(Chunk(payload, self.handle.run_id, self.seq))

    def _set_ready(self, error: BaseException | None = None) -> None:
        ready = self.handle._ready
        if not ready.done():
            if error is None:
                ready.set_result(None)
            else:
                ready.set_exception(error)

    async def execute(self) -> RunResult:
        try:
            await self._run()
        except asyncio.CancelledError:
            abort = self.handle._abort_reason or Abort("ABORTED", "run cancelled")
            self.result.aborted = abort
            self._set_ready()
            self.emit(abort)
        except AgentdError as exc:
            if not self.handle._ready.done():
                self._set_ready(exc)
            else:
                self._fail(Error(exc.message, exc.reason))
        except ModelAPIError as exc:
            self._fail(
                Error(
                    exc.message,
                    "MODEL_ERROR",
                    status_code=exc.status_code,
                    provider_code=exc.provider_code,
                    retryable=exc.retryable,
                    details=exc.details or None,
                )
            )
        except Exception as exc:
            log.exception("run %s failed", self.handle.run_id)
            self._fail(Error(f"run failed: {exc}", "RUN_FAILED"))
        finally:
            self._set_ready()
            self.handle.buffer.close()
        return self.result

    def _fail(self, error: Error) -> None:
        self._set_ready()
        self.result.error = error
        self.result.finish_reason = "error"
        self.emit(error)

    async def _run(self) -> None:
        from agentd.runtime.agent import instructions_to_messages, resolve_dynamic

        agent = self.agent
        context = dict(self.call_options.request_context or {})
        defaults = await resolve_dynamic(agent.default_options, context)
        options = self.call_options.merged_over(defaults)
        model_spec = await resolve_dynamic(agent.model, context)
        instructions = instructions_to_messages(await resolve_dynamic(agent.instructions, context))
        tools = {t.name: t for t in await resolve_dynamic(agent.tools, context)}
        model = resolve_model(model_spec)
        memory = options.memory
        self.result.thread_id = memory.thread.id if memory and memory.thread else None
        self.result.resource_id = memory.resource if memory else None

        self.emit(Start(agent.id, self.result.thread_id, self.result.resource_id))
        conversation = [*instructions, *self.input]
        max_steps = options.effective_max_steps
        for step_number in range(max_steps):
            step = StepResult(step_number, model=model.spec)
            message_id = new_id("msg_")
            request = ModelRequest(
                prompt=list(conversation),
                tools=self._tool_definitions(tools, options),
                tool_choice=options.tool_choice,
                provider_options=dict(options.provider_options or {}),
                structured_output=options.structured_output,
                step_number=step_number,
            )
            if options.model_settings is not None:
                request.settings = options.model_settings
            events = model.stream(request)  # raises set-up mistakes synchronously
            self._set_ready()
            self.emit(StepStart(step_number, message_id, model.spec, datetime.now(UTC)))
            parts: list[Part] = []
            text: list[str] = []
            reasoning: list[str] = []
            finish: ModelFinish | None = None
            async for event in events:
                if isinstance(event, ModelFinish):
                    finish = event
                    continue
                if isinstance(event, TextDelta):
                    text.append(event.text)
                elif isinstance(event, ReasoningDelta):
                    reasoning.append(event.text)
                elif isinstance(event, ToolCall):
                    step.tool_calls.append(event.call)
                self.emit(event)
            if finish is None:
                raise ModelAPIError("the model stream ended without a finish event", retryable=True)
            step.text = "".join(text)
            step.reasoning_text = "".join(reasoning)
            step.finish_reason = finish.finish_reason
            step.raw_finish_reason = finish.raw_finish_reason
            step.usage = finish.usage
            if step.reasoning_text:
                parts.append(ReasoningPart(step.reasoning_text))
            if step.text:
                parts.append(TextPart(step.text))
            parts.extend(step.tool_calls)
            continues = (
                finish.finish_reason == "tool-calls" and bool(step.tool_calls) and step_number + 1 < max_steps
            )
            if step.tool_calls:
                for call in step.tool_calls:
                    outcome = await self._call_tool(tools, call, context)
                    step.tool_results.append(outcome)
                    parts.append(outcome)
                    self.emit(ToolResult(outcome))
            assistant = Message(role="assistant", parts=parts, id=message_id)
            conversation.append(assistant)
            self.result.response_messages.append(assistant)
            self.result.steps.append(step)
            self.emit(
                StepFinish(
                    step_number,
                    message_id,
                    step.finish_reason,
                    step.usage,
                    raw_finish_reason=step.raw_finish_reason,
                    is_continued=continues,
                    provider_metadata=finish.provider_metadata,
                    model=model.spec,
                )
            )
            if not continues:
                break
        self._finish(options)

    def _finish(self, options: ExecutionOptions) -> None:
        result = self.result
        last = result.steps[-1]
        result.text = "".join(s.text for s in result.steps if s.tripwire is None)
        result.reasoning_text = "".join(s.reasoning_text for s in result.steps if s.tripwire is None)
        result.finish_reason = last.finish_reason
        result.raw_finish_reason = last.raw_finish_reason
        result.usage = last.usage
        total = Usage()
        for step in result.steps:
            total = total + step.usage
        result.total_usage = total
        result.model = last.model
        if options.structured_output is not None:
            try:
                result.object = json.loads(last.text)
            except ValueError:
                result.warnings.append("the model's answer is not valid JSON for the structured output")
        self.emit(
            Finish(
                result.finish_reason,
                result.usage,
                result.total_usage,
                response_messages=list(result.response_messages),
                raw_finish_reason=result.raw_finish_reason,
                model=result.model,
                object=result.object,
                tripwire=result.tripwire,
            )
        )

    @staticmethod
    def _tool_definitions(tools: dict[str, Tool], options: ExecutionOptions) -> list[ToolDefinition]:
        if options.structured_output is not None:
            return []  # a step that asks for a schema sends no tools
        active = options.active_tools
        return [
            ToolDefinition(t.name, t.description, t.input_schema)
            for t in tools.values()
            if active is None or t.name in active
        ]

    async def _call_tool(
        self, tools: dict[str, Tool], call: ToolCallPart, request_context: dict[str, Any]
    ) -> ToolResultPart:
        tool = tools.get(call.tool_name)
        if tool is None:
            return ToolResultPart(
                call.tool_call_id, call.tool_name, f"unknown tool {call.tool_name!r}", True, call.args
            )
        ctx = ToolContext(
            run_id=self.handle.run_id,
            agent_id=self.agent.id,
            tool_call_id=call.tool_call_id,
            request_context=request_context,
            thread_id=self.result.thread_id,
            resource_id=self.result.resource_id,
        )
        try:
            output = await tool.call(call.args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            return ToolResultPart(call.tool_call_id, call.tool_name, str(exc), True, call.args)
        return ToolResultPart(call.tool_call_id, call.tool_name, output, False, call.args)


async def drain(handle: RunHandle) -> None:
    """Waits for a run to end, ignoring how."""
    with contextlib.suppress(Exception):
        await handle.result()
