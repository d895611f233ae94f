"""The agent loop: one run of an agent, streamed as chunks into a ChunkBuffer.

resolve processors ─► processInput
per step: processInputStep (+ prepareStep) ─► prompt ─► processLLMRequest
          ─► model (or cached replay; processAPIError on rejection)
          ─► processOutputStream per chunk ─► processLLMResponse
          ─► processOutputStep ─► tools ─► processToolResult
processOutputResult ─► finish
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from agentd.runtime.attachments import DOWNLOAD_ASSETS_FAILED, prepare_attachments
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.chunks import (
    Abort,
    Chunk,
    Data,
    Error,
    Finish,
    FinishReason,
    Payload,
    ReasoningDelta,
    ReasoningEnd,
    SignalEcho,
    Start,
    StepFinish,
    StepStart,
    TextDelta,
    ToolCall,
    ToolResult,
    Tripwire,
    TripwireChunk,
    Usage,
)
from agentd.runtime.clone import clone
from agentd.runtime.errors import AgentdError, FieldViolation, InvalidArgument
from agentd.runtime.messages import (
    DataPart,
    Message,
    Part,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    new_id,
)
from agentd.runtime.models.base import (
    LanguageModel,
    ModelAPIError,
    ModelEvent,
    ModelFinish,
    ModelRequest,
    ToolDefinition,
)
from agentd.runtime.models.router import resolve_model
from agentd.runtime.options import ExecutionOptions, ToolHooks
from agentd.runtime.processors.base import CachedLLMResponse, OutputResult, TripWire
from agentd.runtime.processors.builtins.error_defaults import DEFAULT_MAX_PROCESSOR_RETRIES
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.processors.phases import ProcessorRunError, StepInput
from agentd.runtime.processors.runner import ProcessorRunner, RunnerContext, is_intermediate_step_finish
from agentd.runtime.telemetry import RunTrace, Telemetry
from agentd.runtime.tools import Tool, ToolContext

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent

log = logging.getLogger("agentd.run")

#: Request-context keys the runtime itself writes (callers set them through
#: `memory` and `response_cache`; over RPC any "agentd." key is reserved).
RESOURCE_ID_KEY = "agentd.resourceId"
THREAD_ID_KEY = "agentd.threadId"
RESPONSE_CACHE_KEY = "agentd.responseCache"
#: The thread a memory-bound run reads and writes (a memory.MemoryThread).
MEMORY_THREAD_KEY = "agentd.memoryThread"


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
    from_cache: bool = False
    #: Reasoning blocks with their provider signatures, sent back in later steps.
    reasoning_parts: list[ReasoningPart] = field(default_factory=list)


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
        return [c for s in self.steps if s.tripwire is None for c in s.tool_calls]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [r for s in self.steps if s.tripwire is None for r in s.tool_results]


class RunHandle:
    """A started run: iterate it for chunks, await `result()` for the full output."""

    def __init__(self, run_id: str, agent: Agent) -> None:
        self.run_id = run_id
        self.agent = agent
        self.buffer = ChunkBuffer()
        self.cancelled = asyncio.Event()
        self._ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[RunResult] | None = None
        self._abort_reason: Abort | None = None
        #: Signals delivered into this run; it takes them at its next model boundary.
        self.pending_signals: list[Any] = []
        #: Set once the run will call the model no more: later signals need a new run.
        self.closed_to_signals = False
        #: Signals to echo as the run starts (the signal that woke it).
        self.opening_signals: list[Any] = []
        #: Client tool calls waiting for the caller's answer, by tool call id.
        self._client_calls: dict[str, asyncio.Future[tuple[Any, bool]]] = {}
        #: How long a client tool call waits for its answer.
        self.client_tool_timeout = 120.0

    def answer_tool(self, tool_call_id: str, result: Any, is_error: bool = False) -> bool:
        """Answers a client tool call; False when no such call is waiting."""
        waiting = self._client_calls.get(tool_call_id)
        if waiting is None or waiting.done():
            return False
        waiting.set_result((result, is_error))
        return True

    def expect_client_tool(self, tool_call_id: str) -> None:
        """Registers a client tool call before its chunk goes out, so an answer
        that arrives before the run starts waiting is kept."""
        self._client_calls.setdefault(tool_call_id, asyncio.get_running_loop().create_future())

    async def await_client_tool(self, tool_call_id: str) -> Any:
        self.expect_client_tool(tool_call_id)
        waiting = self._client_calls[tool_call_id]
        try:
            result, is_error = await asyncio.wait_for(waiting, self.client_tool_timeout)
        except TimeoutError:
            raise RuntimeError(f"the client did not answer within {self.client_tool_timeout:g}s") from None
        finally:
            self._client_calls.pop(tool_call_id, None)
        if is_error:
            raise RuntimeError(str(result))
        return result

    def deliver(self, signal: Any) -> bool:
        """Hands a signal to the run; False when it can no longer take one."""
        if self.closed_to_signals or self.done:
            return False
        self.pending_signals.append(signal)
        return True

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
        self.cancelled.set()
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
    loop = _AgentLoop(handle, messages, options, parent_run_id, telemetry or Telemetry())
    handle._task = asyncio.get_running_loop().create_task(loop.execute(), name=f"run {handle.run_id}")
    return handle


class _Writer:
    """`writer.custom(...)` for hooks and tools: a `data-*` chunk into the live
    stream, kept in the step's response message unless transient."""

    def __init__(self, loop: _AgentLoop) -> None:
        self._loop = loop

    async def custom(
        self, type: str | dict[str, Any], data: Any = None, *, id: str | None = None, transient: bool = False
    ) -> None:
        if isinstance(type, dict):  # the reference runtime's object form
            data, id, transient = type.get("data"), type.get("id"), bool(type.get("transient"))
            kind = str(type["type"])
        else:
            kind = type
        if not kind.startswith("data-"):
            raise ValueError(f"custom chunk types start with 'data-', not {kind!r}")
        await self._loop.emit_out(Data(kind, data, id, transient))
        if not transient:
            self._loop.keep_data_part(DataPart(kind, data, id))


def _violations_from_schema(schema: dict[str, Any], context: dict[str, Any]) -> list[FieldViolation]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    out: list[FieldViolation] = []
    for error in sorted(validator.iter_errors(context), key=lambda e: list(e.absolute_path)):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        if error.validator == "required":
            missing = re.match(r"'([^']+)'", error.message)
            if missing:
                path += f".{missing.group(1)}"
        out.append(FieldViolation(f"options.request_context{path}", error.message))
    return out


class _AgentLoop:
    def __init__(
        self,
        handle: RunHandle,
        messages: list[Message],
        options: ExecutionOptions,
        parent_run_id: str | None,
        telemetry: Telemetry,
    ) -> None:
        self.handle = handle
        self.telemetry = telemetry
        self.trace = RunTrace(None)
        self.agent = handle.agent
        self.input = messages
        self.call_options = options
        self.parent_run_id = parent_run_id
        self.seq = 0
        self.result = RunResult(run_id=handle.run_id, agent_id=handle.agent.id)
        self.ml = MessageList()
        self.runner: ProcessorRunner | None = None
        self.current_message_id = ""
        self._models: dict[str, LanguageModel] = {}
        self._on_success: list[Any] = []
        self._client_names: set[str] = set()
        self._tried_fallbacks: set[str] = set()
        #: Per-run attachment bookkeeping (attachments.prepare_attachments).
        self._attachments: dict[str, Any] = {}
        #: Tool results of a step replayed from a cache, by tool call id.
        self._replayed_results: dict[str, ToolResultPart] = {}

    # ------------------------------------------------------------ emitting

    def _append(self, chunk: Chunk) -> None:
        self.seq += 1
        chunk.seq = self.seq
        chunk.run_id = self.handle.run_id
        chunk.parent_run_id = self.parent_run_id
        self.handle.buffer.append(chunk)

    def emit(self, payload: Payload) -> None:
        """Emits without output processors (control chunks: tripwire, error, abort)."""
        self._append(Chunk(payload, self.handle.run_id, 0))

    async def emit_out(self, payload: Payload) -> list[Chunk]:
        """Emits through the output processors and returns what was emitted; a
        TripWire there propagates."""
        chunk = Chunk(payload, self.handle.run_id, 0)
        runner = self.runner
        if runner is None or not runner.wants_stream or is_intermediate_step_finish(chunk):
            self._append(chunk)
            return [chunk]
        emitted = await runner.run_output_stream(chunk, self.ml)
        for out in emitted:
            self._append(out)
        return emitted

    def keep_data_part(self, part: DataPart) -> None:
        message = self.ml.get(self.current_message_id)
        if message is None:
            message = Message(role="assistant", parts=[], id=self.current_message_id or new_id("msg_"))
            self.ml.add(message, "response")
        message.parts.append(part)

    def _set_ready(self, error: BaseException | None = None) -> None:
        ready = self.handle._ready
        if not ready.done():
            if error is None:
                ready.set_result(None)
            else:
                ready.set_exception(error)

    # ------------------------------------------------------------ the run

    async def execute(self) -> RunResult:
        # Started inside the run's task: its parent is the span current where the run began (the RPC's).
        self.trace = self.telemetry.run(agent_id=self.agent.id, agent_name=self.agent.name, run_id=self.handle.run_id)
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
        except ProcessorRunError as exc:
            self._fail(Error(str(exc), exc.reason))
        except Exception as exc:
            log.exception("run %s failed", self.handle.run_id)
            self._fail(Error(f"run failed: {exc}", "RUN_FAILED"))
        finally:
            self._set_ready()
            self.handle.buffer.close()
            result = self.result
            self.trace.end(
                thread_id=result.thread_id,
                finish_reason=result.finish_reason,
                input_tokens=result.total_usage.input_tokens,
                output_tokens=result.total_usage.output_tokens,
                model=result.model,
                tripwire=result.tripwire,
                error=result.error,
                aborted=result.aborted,
                text=result.text,
            )
        return self.result

    def _fail(self, error: Error) -> None:
        self._set_ready()
        self.result.error = error
        self.result.finish_reason = "error"
        self.emit(error)

    async def _run(self) -> None:
        from agentd.runtime.agent import instructions_to_messages, resolve_dynamic

        agent = self.agent
        caller_context = dict(self.call_options.request_context or {})
        if agent.request_context_schema:
            violations = _violations_from_schema(agent.request_context_schema, caller_context)
            if violations:
                raise InvalidArgument.fields(violations, "REQUEST_CONTEXT_INVALID")
        context = dict(caller_context)
        defaults = await resolve_dynamic(agent.default_options, context)
        options = self.call_options.merged_over(defaults)
        memory = options.memory
        self.result.thread_id = memory.thread.id if memory and memory.thread else None
        self.result.resource_id = memory.resource if memory else None
        if self.result.resource_id:
            context[RESOURCE_ID_KEY] = self.result.resource_id
        if self.result.thread_id:
            context[THREAD_ID_KEY] = self.result.thread_id
        if options.response_cache is not None:
            context[RESPONSE_CACHE_KEY] = options.response_cache.as_context()
        if agent.memory is not None:
            if memory is None or memory.thread is None or not memory.resource:
                raise InvalidArgument.field(
                    "options.memory",
                    f"agent {agent.id!r} keeps conversations: set memory.resource and memory.thread_id",
                    "MEMORY_IDS_REQUIRED",
                )
            context[MEMORY_THREAD_KEY] = await agent.memory.prepare(
                memory.resource, memory.thread.id, title=memory.thread.title, metadata=memory.thread.metadata
            )

        model_spec: str = await resolve_dynamic(agent.model, context)
        self.ml = MessageList(instructions_to_messages(await resolve_dynamic(agent.instructions, context)))
        for message in self.input:
            self.ml.add(message, "input")
        tools: dict[str, Tool] = {t.name: t for t in await resolve_dynamic(agent.tools, context)}
        for name, sub in (await resolve_dynamic(agent.agents, context)).items():
            tools[name] = self._sub_agent_tool(name, sub, context)
        client_names = {t.name for t in options.client_tools or ()}
        for client_tool in options.client_tools or ():

            async def ask_client(args: Any, ctx: ToolContext) -> Any:
                return await self.handle.await_client_tool(ctx.tool_call_id)  # answered through Connect

            tools[client_tool.name] = Tool(
                client_tool.name, client_tool.description, ask_client, client_tool.input_schema
            )
        self._client_names = client_names
        self.runner = await self._runner(options, context)
        resolve_model(model_spec)  # fail set-up, not the stream, on a model no run can use

        self.emit(Start(agent.id, self.result.thread_id, self.result.resource_id))
        for signal in self.handle.opening_signals:  # the signal that woke this run
            self.emit(SignalEcho(signal))
        try:
            await self.runner.run_input(self.ml)
            await self._steps(options, model_spec, tools, context)
            result = self.result
            self.trace.end_phase("result")
            await self.runner.run_output_result(
                self.ml,
                OutputResult(
                    text=self._final_text(),
                    usage=self._last_usage(),
                    finish_reason=self._last_reason(),
                    steps=result.steps,
                ),
            )
        except TripWire as tripwire:
            self._end_tripwire(tripwire)
            return
        self._finish(options)
        for callback in self._on_success:
            try:
                await _maybe_await(callback(self.result))
            except Exception:
                log.exception("an on_success callback of run %s failed; ignored", self.handle.run_id)

    async def _runner(self, options: ExecutionOptions, context: dict[str, Any]) -> ProcessorRunner:
        from agentd.runtime.agent import resolve_dynamic
        from agentd.runtime.processors.builtins.error_defaults import resolve_error_processors
        from agentd.runtime.processors.builtins.prepare_step import PrepareStepProcessor

        agent = self.agent

        async def lane(override: tuple[Any, ...] | None, configured: Any) -> list[Any]:
            return list(override) if override is not None else list(await resolve_dynamic(configured, context))

        # Framework processors (memory) run around the configured ones, even when
        # a call replaces them: memory loads first and saves last, so an output
        # guardrail's abort leaves nothing saved.
        framework = FrameworkProcessors()
        if agent.memory is not None:
            framework = await _maybe_await(agent.memory.processors(context))
        inputs = [*framework.input, *await lane(options.input_processors, agent.input_processors)]
        if options.prepare_step is not None:
            inputs.append(PrepareStepProcessor(options.prepare_step))
        outputs = [*await lane(options.output_processors, agent.output_processors), *framework.output]
        if options.error_processors is not None:
            errors = list(options.error_processors)  # replaces the resolved list, defaults included
        else:
            enabled = (
                options.error_processor_defaults
                if options.error_processor_defaults is not None
                else agent.error_processor_defaults
            )
            errors = resolve_error_processors(
                list(await resolve_dynamic(agent.error_processors, context)), defaults_enabled=enabled
            )
        errors.extend(framework.error)  # memory's error processors run after the list, always
        ctx = RunnerContext(
            run_id=self.handle.run_id,
            agent=agent,
            request_context=context,
            writer=_Writer(self),
            cancelled=self.handle.cancelled,
            send_signal_for=self._send_signal_for,
            on_success=self._on_success.append,
            trace=self.trace if self.trace.span is not None else None,
        )
        return ProcessorRunner(ctx, input=inputs, output=outputs, error=errors)

    # ------------------------------------------------------------ steps

    def _step_retry_cap(self, options: ExecutionOptions) -> int | None:
        """Step retries (input/output step aborts) need an explicit cap."""
        if options.max_processor_retries is not None:
            return options.max_processor_retries
        return self.agent.max_processor_retries

    def _error_retry_cap(self, options: ExecutionOptions) -> int:
        explicit = self._step_retry_cap(options)
        return explicit if explicit is not None else DEFAULT_MAX_PROCESSOR_RETRIES

    def _retry_step(self, tripwire: TripWire, options: ExecutionOptions) -> bool:
        """Replays the step with the reason appended as a system reminder, when allowed."""
        assert self.runner is not None
        cap = self._step_retry_cap(options)
        if not tripwire.retry or cap is None or self.runner.retry_count >= cap:
            return False
        from agentd.runtime.signals import create_signal, to_db_message

        self.runner.retry_count += 1
        self.trace.event("agentd.retry", cause="tripwire", processor_id=tripwire.processor_id, reason=tripwire.message)
        reminder = create_signal("reactive", tripwire.message)
        self.ml.add(to_db_message(reminder), "context")
        return True

    async def _steps(
        self, options: ExecutionOptions, model_spec: str, tools: dict[str, Tool], context: dict[str, Any]
    ) -> None:
        assert self.runner is not None
        runner = self.runner
        original_system = self.ml.system_messages
        max_steps = options.effective_max_steps
        step_number = 0
        while step_number < max_steps:
            self.trace.end_phase(f"step {step_number}")
            # Signals delivered meanwhile join here: at a model boundary, never
            # between a tool call and its result.
            await self._take_pending_signals()
            message_id = new_id("msg_")
            self.current_message_id = message_id
            self.ml.replace_all_system_messages(original_system)  # per-step system changes do not stick
            step_input = StepInput(
                model=model_spec,
                tools=dict(tools),
                tool_choice=options.tool_choice,
                active_tools=options.active_tools,
                provider_options=dict(options.provider_options or {}),
                model_settings=options.model_settings,
                structured_output=options.structured_output,
            )
            try:
                step_input = await runner.run_input_step(
                    step_input,
                    self.ml,
                    step_number=step_number,
                    steps=self.result.steps,
                    message_id=message_id,
                )
            except TripWire as tripwire:
                if self._retry_step(tripwire, options):
                    continue
                raise
            step = StepResult(step_number, model=step_input.model)
            self._tried_fallbacks = set()
            await self._model_call(step, step_input, options, message_id)

            assistant = self._assistant_message(step, message_id)
            self.ml.add(assistant, "response")
            try:
                await runner.run_output_step(
                    self.ml,
                    step_number=step_number,
                    finish_reason=step.finish_reason,
                    tool_calls=step.tool_calls,
                    text=step.text,
                    usage=step.usage,
                    steps=[*self.result.steps, step],
                )
            except TripWire as tripwire:
                step.tripwire = _tripwire(tripwire)
                if self._retry_step(tripwire, options):
                    self.ml.remove_by_ids([message_id])
                    self.result.steps.append(step)
                    await self._step_finish(step, message_id, continues=True)
                    continue
                self.result.steps.append(step)
                raise

            continues = step.finish_reason == "tool-calls" and bool(step.tool_calls) and step_number + 1 < max_steps
            await self._run_tools(step, step_input.tools, options, context, assistant)
            self.result.steps.append(step)
            await self._step_finish(step, message_id, continues=continues)
            if not continues and not (self.handle.pending_signals and step_number + 1 < max_steps):
                break  # a signal that arrived during the last step earns another turn
            step_number += 1
        self.handle.closed_to_signals = True

    async def _step_finish(self, step: StepResult, message_id: str, *, continues: bool) -> None:
        await self.emit_out(
            StepFinish(
                step.step_number,
                message_id,
                step.finish_reason,
                step.usage,
                raw_finish_reason=step.raw_finish_reason,
                is_continued=continues,
                model=step.model,
                tripwire=step.tripwire,
                warnings=step.warnings,
            )
        )

    @staticmethod
    def _assistant_message(step: StepResult, message_id: str) -> Message:
        parts: list[Part] = []
        if step.reasoning_parts:
            parts.extend(step.reasoning_parts)
        elif step.reasoning_text:
            parts.append(ReasoningPart(step.reasoning_text))
        if step.text:
            parts.append(TextPart(step.text))
        parts.extend(step.tool_calls)
        return Message(role="assistant", parts=parts, id=message_id)

    def _next_fallback(self, failed: str) -> str | None:
        """The agent's next fallback model after `failed`, once each per step."""
        chain = list(self.agent.fallback_models)
        tried = self._tried_fallbacks
        for spec in chain:
            if spec != failed and spec not in tried:
                tried.add(spec)
                return spec
        return None

    def _model(self, spec: str) -> LanguageModel:
        # One instance per model per run: scripted models count their calls.
        model = self._models.get(spec)
        if model is None:
            model = self._models[spec] = resolve_model(spec)
        return model

    async def _model_call(
        self, step: StepResult, step_input: StepInput, options: ExecutionOptions, message_id: str
    ) -> None:
        assert self.runner is not None
        runner = self.runner
        model = self._model(step_input.model)
        started = False
        placeholder_retry = False  # the one last retry for attachments nothing could recover
        while True:  # once, plus once per retry an error processor asks for
            # The prompt is rebuilt on a retry: error processors repair the list.
            prompt, cached = await runner.run_llm_request(
                build_prompt(self.ml),
                model=model.spec,
                step_number=step.step_number,
                steps=self.result.steps,
                message_list=self.ml,
            )
            request = ModelRequest(
                prompt=prompt,
                tools=_tool_definitions(step_input.tools, step_input.active_tools, step_input.structured_output),
                tool_choice=step_input.tool_choice,
                provider_options=step_input.provider_options,
                structured_output=step_input.structured_output,
                step_number=step.step_number,
            )
            if step_input.model_settings is not None:
                request.settings = step_input.model_settings
            # Attachments the model cannot fetch itself are downloaded first; a
            # failed download is a ModelAPIError (DOWNLOAD_ASSETS_FAILED) the
            # error processors see like any provider failure.
            chat = self.trace.chat(model.spec, step.step_number, prompt)
            attachments_ok = True
            try:
                if cached is None:  # a cached answer needs no attachment
                    request = await prepare_attachments(request, model, self.ml, self._attachments)
            except ModelAPIError as error:
                attachments_ok = False
                download_error = error
            raw: list[ModelEvent] = []
            text: list[str] = []
            reasoning: list[str] = []
            by_block: dict[str, str] = {}  # reasoning text per block id, until its end carries the signature
            step.reasoning_parts = []
            step.tool_calls = []
            finish: ModelFinish | None = None
            try:
                if not attachments_ok:
                    raise download_error
                events = _replay(cached) if cached is not None else model.stream(request)
                self._set_ready()
                if not started:
                    started = True
                    at = None if cached is not None else datetime.now(UTC)
                    await self.emit_out(StepStart(step.step_number, message_id, model.spec, at))
                keep_raw = bool(runner.on_llm_response)  # only response hooks read the raw events
                async for event in events:
                    if keep_raw:  # a copy: output processors may change payloads in place
                        raw.append(clone(event))
                    if isinstance(event, ModelFinish):
                        finish = event
                        continue
                    if isinstance(event, ToolCall):  # tools run on what the model asked for
                        if event.call.tool_name in self._client_names:
                            event.call.client_tool = True  # the caller answers it
                            self.handle.expect_client_tool(event.call.tool_call_id)
                        step.tool_calls.append(event.call)
                    try:
                        # Text is what the caller sees: after output processors
                        # (a redacted or dropped delta is redacted or dropped here too).
                        for out in await self.emit_out(event):
                            if isinstance(out.payload, TextDelta):
                                text.append(out.payload.text)
                            elif isinstance(out.payload, ReasoningDelta):
                                reasoning.append(out.payload.text)
                                by_block[out.payload.id] = by_block.get(out.payload.id, "") + out.payload.text
                            elif isinstance(out.payload, ReasoningEnd):
                                end = out.payload
                                step.reasoning_parts.append(
                                    ReasoningPart(
                                        by_block.pop(end.id, ""),
                                        end.signature,
                                        end.redacted_data,
                                        end.provider_metadata,
                                    )
                                )
                    except TripWire as tripwire:  # the stream is blocked
                        step.text, step.reasoning_text = "".join(text), "".join(reasoning)
                        step.tripwire = _tripwire(tripwire)
                        self.result.steps.append(step)
                        chat.end(tripwire=tripwire.message)
                        raise
                if finish is None:
                    raise ModelAPIError("the model stream ended without a finish event", retryable=True)
            except ModelAPIError as error:
                chat.end(error=error)
                if await self._recover(error, step, message_id, options):
                    self.trace.event("agentd.retry", cause="api_error", reason=error.message)
                    continue
                fallback = self._next_fallback(model.spec)
                if fallback is None:
                    if error.provider_code == DOWNLOAD_ASSETS_FAILED and not placeholder_retry:
                        # The turn does not fail for an attachment: on this retry
                        # prepare_attachments sends the URLs that failed again as
                        # "[Attachment unavailable: <name>]" placeholders.
                        placeholder_retry = True
                        continue
                    raise
                self.trace.event("agentd.fallback", failed_model=model.spec, model=fallback, reason=error.message)
                log.warning("model %s failed (%s); falling back to %s", model.spec, error, fallback)
                model = self._model(fallback)  # the error processors gave up: the next model's turn
                step.model = model.spec
                continue
            except BaseException as exc:  # cancelled, or a failure the run reports: the span ends either way
                chat.end(error=exc)
                raise
            break
        chat.end(
            finish_reason=finish.finish_reason,
            input_tokens=finish.usage.input_tokens,
            output_tokens=finish.usage.output_tokens,
            from_cache=cached is not None,
            text="".join(text),
        )
        step.text, step.reasoning_text = "".join(text), "".join(reasoning)
        step.finish_reason = finish.finish_reason
        step.raw_finish_reason = finish.raw_finish_reason
        step.usage = finish.usage
        step.from_cache = cached is not None
        self._replayed_results = {r.tool_call_id: r for r in cached.tool_results} if cached is not None else {}
        if cached is not None:
            step.warnings.extend(cached.warnings)
        await runner.run_llm_response(
            raw,
            model=model.spec,
            step_number=step.step_number,
            steps=[*self.result.steps, step],
            from_cache=cached is not None,
        )

    async def _recover(
        self, error: ModelAPIError, step: StepResult, message_id: str, options: ExecutionOptions
    ) -> bool:
        """Runs the error processors; True when one asked for a retry within budget."""
        assert self.runner is not None
        runner = self.runner
        if not runner.on_api_error or runner.retry_count >= self._error_retry_cap(options):
            return False
        retry = await runner.run_api_error(
            error, self.ml, step_number=step.step_number, steps=self.result.steps, message_id=message_id
        )
        if not retry or runner.retry_count >= self._error_retry_cap(options):
            return False
        runner.retry_count += 1
        return True

    # ------------------------------------------------------------ tools

    async def _run_tools(
        self,
        step: StepResult,
        tools: dict[str, Tool],
        options: ExecutionOptions,
        context: dict[str, Any],
        assistant: Message,
    ) -> None:
        assert self.runner is not None
        hooks = _effective_hooks(self.agent.hooks, options.hooks)
        for call in step.tool_calls:
            replayed = self._replayed_results.get(call.tool_call_id)
            if replayed is not None:  # a cached step: the tool is not run again
                outcome = clone(replayed)
                assistant.parts.append(outcome)
                step.tool_results.append(outcome)
                await self.emit_out(ToolResult(outcome))
                continue
            tool_trace = self.trace.tool(call.tool_name, call.tool_call_id, call.args)
            try:
                with tool_trace.active():
                    outcome = await self._call_tool(tools.get(call.tool_name), call, context, hooks)
            except BaseException:
                tool_trace.end(result="cancelled", is_error=True)
                raise
            tool_trace.end(result=outcome.result, is_error=outcome.is_error)
            assistant.parts.append(outcome)
            if not outcome.is_error:
                await self.runner.run_tool_result(
                    self.ml,
                    step_number=step.step_number,
                    tool_name=call.tool_name,
                    tool_call_id=call.tool_call_id,
                    args=call.args,
                    result=outcome.result,
                    steps=self.result.steps,
                    provider_executed=call.provider_executed,
                )
                outcome = self.ml.find_tool_result(call.tool_call_id) or outcome  # processors may rewrite it
            step.tool_results.append(outcome)
            await self.emit_out(ToolResult(outcome))

    async def _call_tool(
        self, tool: Tool | None, call: ToolCallPart, request_context: dict[str, Any], hooks: ToolHooks
    ) -> ToolResultPart:
        def result(value: Any, is_error: bool = False) -> ToolResultPart:
            return ToolResultPart(call.tool_call_id, call.tool_name, value, is_error, call.args)

        if tool is None:
            return result(f"unknown tool {call.tool_name!r}", True)
        ctx = ToolContext(
            run_id=self.handle.run_id,
            agent_id=self.agent.id,
            tool_call_id=call.tool_call_id,
            request_context=request_context,
            thread_id=self.result.thread_id,
            resource_id=self.result.resource_id,
            writer=_Writer(self),
        )
        hook_ctx = ToolHookContext(
            tool_name=call.tool_name,
            input=call.args,
            context=ctx,
            metadata={"agentId": self.agent.id, "agentName": self.agent.name},
        )
        if hooks.before_tool_call is not None:
            decision = await _maybe_await(hooks.before_tool_call(hook_ctx))
            if isinstance(decision, dict) and decision.get("proceed") is False:
                return result(decision.get("output"))
        output: Any = None
        failure: BaseException | None = None
        try:
            output = await tool.call(call.args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            failure = exc
        if hooks.after_tool_call is not None:
            hook_ctx.output, hook_ctx.error = output, failure
            try:
                await _maybe_await(hooks.after_tool_call(hook_ctx))
            except Exception:
                log.exception("after_tool_call hook failed for %s", call.tool_name)
        if failure is not None:
            return result(str(failure), True)
        return result(output)

    def _sub_agent_tool(self, name: str, sub: Agent, context: dict[str, Any]) -> Tool:
        async def delegate(args: Any) -> Any:
            prompt = args.get("prompt") if isinstance(args, dict) else str(args)
            child = start_run(
                sub,
                [Message.user(str(prompt or ""))],
                ExecutionOptions(request_context=context),
                parent_run_id=self.handle.run_id,
                telemetry=self.telemetry,
            )
            async for chunk in child:  # nested in this run's stream, in order
                self.handle.buffer.append(chunk)
            outcome = await child.result()
            if outcome.error is not None:
                raise RuntimeError(outcome.error.message)
            return outcome.text

        schema = {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}
        return Tool(name, sub.description or f"Delegate to the {sub.name} agent", delegate, schema)

    # ------------------------------------------------------------ signals from outside

    async def _take_pending_signals(self) -> None:
        from agentd.runtime.signals import to_db_message

        while self.handle.pending_signals:
            signal = self.handle.pending_signals.pop(0)
            message = to_db_message(signal, self.result.thread_id, self.result.resource_id)
            self.ml.add(message, "input")  # stored with the run's messages (transient ones are not)
            await self.emit_out(SignalEcho(signal))

    # ------------------------------------------------------------ signals from processors

    def _send_signal_for(self, processor_id: str) -> Any:
        async def send_signal(
            *,
            type: str = "reactive",
            contents: Any = "",
            tag_name: str | None = None,
            attributes: Any = None,
            metadata: dict[str, Any] | None = None,
            transient: bool | None = None,
            id: str | None = None,
        ) -> Any:
            from agentd.runtime.signals import create_signal, to_db_message

            signal = create_signal(
                type,
                contents,
                tag_name=tag_name,
                attributes=attributes,
                metadata=metadata,
                transient=transient,
                id=id,
            )
            if signal.transient and id is None:
                # One stable row per processor and tag: re-sending replaces it
                # and moves it after the newest message, so copies never pile up.
                signal = replace(
                    signal, id=f"transient:{quote(processor_id, safe='')}:{quote(signal.tag_name, safe='')}"
                )
                self.ml.remove_by_ids([signal.id])
            self.ml.add(to_db_message(signal, self.result.thread_id, self.result.resource_id), "context")
            await self.emit_out(SignalEcho(signal))
            return signal

        return send_signal

    # ------------------------------------------------------------ endings

    def _final_text(self) -> str:
        return "".join(s.text for s in self.result.steps if s.tripwire is None)

    def _last_usage(self) -> Usage:
        return self.result.steps[-1].usage if self.result.steps else Usage()

    def _last_reason(self) -> FinishReason:
        return self.result.steps[-1].finish_reason if self.result.steps else "unknown"

    def _totals(self) -> None:
        result = self.result
        result.text = self._final_text()
        result.reasoning_text = "".join(s.reasoning_text for s in result.steps if s.tripwire is None)
        result.usage = self._last_usage()
        total = Usage()
        for step in result.steps:
            total = total + step.usage
        result.total_usage = total
        result.model = result.steps[-1].model if result.steps else ""
        result.response_messages = self.ml.get_response()

    def _finish(self, options: ExecutionOptions) -> None:
        result = self.result
        self._totals()
        last = result.steps[-1]
        result.finish_reason = last.finish_reason
        result.raw_finish_reason = last.raw_finish_reason
        if options.structured_output is not None:
            try:
                result.object = json.loads(last.text)
            except ValueError:
                result.warnings.append("the model's answer is not valid JSON for the structured output")
        self._emit_finish()

    def _end_tripwire(self, tripwire: TripWire) -> None:
        """A tripwire is not an error: a tripwire chunk, then finish with reason other."""
        self._set_ready()
        self.result.tripwire = _tripwire(tripwire)
        self._totals()
        self.result.finish_reason = "other"
        self.emit(TripwireChunk(self.result.tripwire))
        self._emit_finish()

    def _emit_finish(self) -> None:
        result = self.result
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


@dataclass
class FrameworkProcessors:
    """Processors a framework part (memory) adds around the configured lanes."""

    input: list[Any] = field(default_factory=list)
    output: list[Any] = field(default_factory=list)
    error: list[Any] = field(default_factory=list)


@dataclass
class ToolHookContext:
    tool_name: str
    input: Any
    context: ToolContext
    metadata: dict[str, Any]
    output: Any = None
    error: BaseException | None = None


def _effective_hooks(agent_hooks: ToolHooks | None, call_hooks: ToolHooks | None) -> ToolHooks:
    agent_hooks = agent_hooks or ToolHooks()
    if call_hooks is None:
        return agent_hooks
    return ToolHooks(
        before_tool_call=call_hooks.before_tool_call or agent_hooks.before_tool_call,
        after_tool_call=call_hooks.after_tool_call or agent_hooks.after_tool_call,
    )


async def _maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value


def _tripwire(tripwire: TripWire) -> Tripwire:
    return Tripwire(tripwire.message, tripwire.retry, tripwire.metadata, tripwire.processor_id)


def _tool_definitions(tools: dict[str, Tool], active: tuple[str, ...] | None, structured: Any) -> list[ToolDefinition]:
    if structured is not None:
        return []  # a step that asks for a schema sends no tools
    return [
        ToolDefinition(t.name, t.description, t.input_schema)
        for t in tools.values()
        if active is None or t.name in active
    ]


async def _replay(cached: CachedLLMResponse) -> AsyncIterator[ModelEvent]:
    # Copies: a processor's cached response is never changed by the run replaying it.
    for event in cached.chunks:
        yield clone(event)


def build_prompt(message_list: MessageList) -> list[Message]:
    """What the model receives: system messages, then the conversation with
    signal rows rendered as user turns. A copy: changes to it are transient."""
    from agentd.runtime.signals import render_for_model

    prompt = [clone(m) for m in message_list.all_system_messages()]
    for message in message_list.get_all():
        signal = next((p.signal for p in message.parts if isinstance(p, SignalPart)), None)
        prompt.append(render_for_model(signal) if signal is not None else clone(message))
    return prompt


async def drain(handle: RunHandle) -> None:
    """Waits for a run to end, ignoring how."""
    try:
        await handle.result()
    except Exception:
        log.debug("run %s ended with an error", handle.run_id)
