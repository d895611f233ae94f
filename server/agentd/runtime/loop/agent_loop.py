"""The steps of one run: set-up, the input processors, model call and tools
per step, the output processors, and how the run ends (see the package
docstring for the order of the hooks)."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import quote

from agentd.runtime import workflows as tool_workflows  # (each name loads with an agent that has workflows)
from agentd.runtime.agent_definition import (
    MEMORY_THREAD_KEY,
    RESOURCE_ID_KEY,
    RESPONSE_CACHE_KEY,
    THREAD_ID_KEY,
    AgentDefinition,
    instructions_to_messages,
    is_dynamic,
    maybe_await,
    merge_tools,
    resolve_dynamic,
)
from agentd.runtime.cancellation import cancelling, raise_if_cancelling
from agentd.runtime.chunks import (
    Abort,
    Chunk,
    Error,
    Payload,
    SignalEcho,
    Start,
    StepFinish,
    TripwireChunk,
    Usage,
)
from agentd.runtime.errors import AgentdError, FailedPrecondition, InvalidArgument, storage_unavailable
from agentd.runtime.lanes import Lanes, error_retry_cap, resolve_lanes, reused_lanes
from agentd.runtime.loop.after_run import run_after
from agentd.runtime.loop.model_call import ModelCall, tripwire_record
from agentd.runtime.loop.request_context import context_violations
from agentd.runtime.loop.state import LoopContext, RunState
from agentd.runtime.loop.structured import structured_object
from agentd.runtime.loop.tool_calls import ToolCalls
from agentd.runtime.loop.writer import Writer
from agentd.runtime.messages import DataPart, Message, Signal, TextPart, new_id
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.router import resolve_model
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.processors.base import OutputResult, TripWire
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.processors.phases import ProcessorRunError, StepInput
from agentd.runtime.processors.runner import ProcessorRunner, RunnerContext, is_intermediate_step_finish
from agentd.runtime.redact import redact, redact_mapping
from agentd.runtime.results import RunResult, StepResult
from agentd.runtime.scoring.service import EndedRun
from agentd.runtime.signals import create_signal, to_db_message
from agentd.runtime.storage import StorageError
from agentd.runtime.telemetry import RunTrace, Telemetry
from agentd.runtime.tools import Tool, ToolContext, payload_rules

log = logging.getLogger("agentd.run")
_new = object.__new__
_NO_USAGE = Usage()  # a step's usage until its model call says (no Usage changes in place)


def launch(
    state: RunState,
    agent: AgentDefinition,
    messages: list[Message],
    options: ExecutionOptions,
    *,
    parent_run_id: str | None = None,
    telemetry: Telemetry,
) -> asyncio.Task[RunResult]:
    """Starts a run of `agent` that streams into `state`; the task ends with its result."""
    loop = AgentLoop(state, agent, messages, options, parent_run_id, telemetry)
    return state.loop.create_task(loop.execute(), name=f"run {state.run_id}")


class AgentLoop:
    def __init__(
        self,
        state: RunState,
        agent: AgentDefinition,
        messages: list[Message],
        options: ExecutionOptions,
        parent_run_id: str | None,
        telemetry: Telemetry,
    ) -> None:
        self.state = state
        self.telemetry = telemetry
        self.agent = agent
        self.input = messages
        self.call_options = options
        self.parent_run_id = parent_run_id
        self.result = RunResult.starting(state.run_id, agent.id)
        self.ml = MessageList()
        self._on_success: list[Any] = []
        #: Callbacks processors registered to run when the run ends, however it ends.
        self._on_finish: list[Any] = []
        #: The merged options and the request context, once set up.
        self.options = options
        self.context: dict[str, Any] = {}

    # What every run starts with, read from the class until written (a store per field per run saved).
    #: The run's spans, started as the run starts (execute).
    trace: RunTrace
    seq = 0
    runner: ProcessorRunner | None = None
    current_message_id = ""
    #: The last step's input after the input processors: its structured output is what the run answers with.
    last_step_input: StepInput | None = None
    #: The structuring model's usage, part of the run's total (None: no structuring model ran).
    structuring_usage: Usage | None = None
    #: The step whose model call is going (its message not added yet).
    _in_flight: tuple[StepResult, str] | None = None

    # ------------------------------------------------------------ emitting

    def emit_unprocessed(self, payload: Payload) -> None:
        """Emits past the output processors (the run's own chunks: start, the
        opening signals, tripwire, error, abort, finish)."""
        # Chunk(payload, run_id, seq, parent_run_id), field by field: a class
        # call into a dataclass __init__ costs a third more (a run emits this
        # way per chunk when no output-stream processor runs).
        self.seq = seq = self.seq + 1
        state = self.state
        if not state.keeps_chunks:
            return
        chunk = _new(Chunk)
        chunk.payload = payload
        chunk.run_id = state.run_id
        chunk.seq = seq
        chunk.parent_run_id = self.parent_run_id
        chunk.offset = 0
        chunk.source = "agent"
        chunk.metadata = None
        state.buffer.append(chunk)

    async def emit_processed(self, payload: Payload) -> list[Payload]:
        """Emits through the output processors and returns the payloads that
        went out; a TripWire there propagates."""
        runner = self.runner
        if (
            runner is None
            or not runner.on_output_stream
            or (isinstance(payload, StepFinish) and is_intermediate_step_finish(payload))  # (no call per delta)
        ):
            self.emit_unprocessed(payload)
            return [payload]
        state = self.state
        emitted = await runner.run_output_stream(Chunk(payload, state.run_id, 0), self.ml)
        if not state.keeps_chunks:
            return [out.payload for out in emitted]
        append = state.buffer.append
        payloads = []
        for out in emitted:  # numbered as they go out (in place: no call per chunk)
            self.seq = seq = self.seq + 1
            out.seq = seq
            out.run_id = state.run_id
            out.parent_run_id = self.parent_run_id
            append(out)
            payloads.append(out.payload)
        return payloads

    def keep_data_part(self, part: DataPart) -> None:
        message = self.ml.get(self.current_message_id)
        if message is None:
            message = Message(role="assistant", parts=[], id=self.current_message_id or new_id("msg_"))
            self.ml.add(message, "response")
        message.parts.append(part)

    # ------------------------------------------------------------ the run

    async def execute(self) -> RunResult:
        state = self.state
        agent = self.agent
        # Started inside the run's task: its parent is the span current where the run began (the RPC's).
        self.trace = trace = self.telemetry.run(agent_id=agent.id, agent_name=agent.name, run_id=state.run_id)
        state.started = True
        try:
            if state.abort_reason is not None:
                raise asyncio.CancelledError  # aborted before it began: it ends as any aborted run
            await self._run()
        except asyncio.CancelledError:
            await self._end_aborted()
        except Exception as exc:
            if state.cancelled.is_set() or cancelling():
                # Aborted while failing (an error processor's retry wait the abort
                # cut short gives up on the error), or cancelled and a hook turned
                # that into its error: the cancellation is how the run ends.
                await self._end_aborted()
            else:
                self._end_failed(exc)
        finally:
            state.ended = True
            if self._on_finish:
                await run_after(self._on_finish, state)
            state.set_ready()
            state.buffer.close()
            result = self.result
            scoring = self.telemetry.scoring
            held = (
                scoring is not None
                and bool(agent.scorers)  # a list, or a function choosing them: else nothing to score
                and scoring.submit(
                    EndedRun(agent, result, tuple(self.input), self.context, self.options.scorers, trace)
                )
            )
            if trace.recording:  # (else `end` changes nothing: no keyword call for it)
                trace.end(
                    thread_id=result.thread_id,
                    finish_reason=result.finish_reason,
                    input_tokens=result.total_usage.input_tokens,
                    output_tokens=result.total_usage.output_tokens,
                    model=result.model,
                    tripwire=result.tripwire,
                    error=result.error,
                    aborted=result.aborted,
                    text=result.text,
                    hold=held,
                )
            # The runner's context points back here (writer, signals): without
            # that cycle the run is freed when its last reader lets go, not by the collector.
            self.runner = None
        state.settle(result)
        return result

    async def _end_aborted(self) -> None:
        abort = self.state.abort_reason or self.state.unasked_abort()
        self.result.aborted = abort
        self.state.set_ready()
        await self._save_partial(abort)
        self.emit_unprocessed(abort)

    def _end_failed(self, exc: Exception) -> None:
        # A set-up failure is the caller's error; once the start went out (a
        # thread's subscribers saw it) the run also ends with an error chunk.
        if isinstance(exc, AgentdError):
            if not self.state.set_ready(exc) or self.seq:
                self._fail(Error(exc.message, exc.reason))
        elif isinstance(exc, StorageError):  # memory could not be read or saved: the caller may retry
            unavailable = storage_unavailable(exc)
            if not self.state.set_ready(unavailable) or self.seq:
                self._fail(Error(unavailable.message, unavailable.reason, retryable=True))
        elif isinstance(exc, ModelAPIError):
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
        elif isinstance(exc, ProcessorRunError):
            self._fail(Error(str(exc), exc.reason))
        else:
            log.error("run %s failed", self.state.run_id, exc_info=exc)
            self._fail(Error(f"run failed: {exc}", "RUN_FAILED"))

    def _fail(self, error: Error) -> None:
        # What a provider or a processor said can quote a secret back: it never reaches a caller.
        error.message = redact(error.message)
        if error.details:
            error.details = redact_mapping(error.details)
        self.state.set_ready()
        self.result.error = error
        self.result.finish_reason = "error"
        self.emit_unprocessed(error)

    async def _run(self) -> None:
        agent = self.agent
        context = dict(self.call_options.request_context or {})
        if agent.request_context_schema:  # the caller's context, before the runtime's own keys join it
            violations = context_violations(agent.request_context_schema, context)
            if violations:
                raise InvalidArgument.fields(violations, "REQUEST_CONTEXT_INVALID")
        self.context = context
        # A field given as a value is read as it is (a function of the request
        # context is awaited): most fields of most agents cost no coroutine.
        defaults: Any = agent.default_options  # (Any, not a cast: typing.cast is a call)
        if callable(defaults) and is_dynamic(defaults):  # (callable first: a C call answers for most agents)
            defaults = await resolve_dynamic(defaults, context)
        self.options = options = self.call_options.merged_over(defaults)
        memory = options.memory
        self.result.thread_id = memory.thread.id if memory and memory.thread else None
        self.result.resource_id = memory.resource if memory else None
        if self.result.resource_id:
            context[RESOURCE_ID_KEY] = self.result.resource_id
        if self.result.thread_id:
            context[THREAD_ID_KEY] = self.result.thread_id
        if options.response_cache is not None:
            context[RESPONSE_CACHE_KEY] = options.response_cache.as_context()
        # A memory agent called without a thread runs without memory (nothing
        # recalled, nothing saved), as Mastra does; a thread needs its resource.
        if agent.memory is not None and memory is not None and memory.thread is not None:
            if not memory.resource:
                raise InvalidArgument.field(
                    "options.memory.resource", "is required with a thread", "MEMORY_IDS_REQUIRED"
                )
            context[MEMORY_THREAD_KEY] = await agent.memory.prepare(
                memory.resource, memory.thread.id, title=memory.thread.title, metadata=memory.thread.metadata
            )

        fields: Any = (agent.model, agent.instructions, agent.tools, agent.agents, agent.workflows)
        if any(map(callable, fields)) and any(map(is_dynamic, fields)):  # (in this order; callable as above)
            fields = [await resolve_dynamic(value, context) for value in fields]
        model_spec: str = fields[0]
        own: Sequence[Tool]
        agents: dict[str, AgentDefinition]
        workflows: Sequence[Any]
        _, instructions, own, agents, workflows = fields
        self.ml.replace_all_system_messages(instructions_to_messages(instructions))
        for message in self.input:
            self.ml.add(message, "input")
        own_tools = own if not agent.tool_sources else merge_tools(own, agent.source_tools())
        # (What merge_tools keeps of a list: the last of a name. None: no comprehension's call.)
        tools: dict[str, Tool] = {t.name: t for t in own_tools} if own_tools else {}
        for name, sub in agents.items():
            tools[name] = self._sub_agent_tool(name, sub, context)
        if callable(agent.workflows):  # static lists were checked when the host was built
            try:
                tool_workflows.check_workflows(workflows)
            except ValueError as exc:
                raise FailedPrecondition(f"agent {agent.id!r}: {exc}", "WORKFLOW_INVALID") from None
        if workflows:  # (a run without workflows lends nothing)
            rules = functools.partial(payload_rules, agent.tool_transform)
            sink = self.state.buffer if self.state.keeps_chunks else None
            lent = tool_workflows.WorkflowHost(sink, self._run_nested, self.telemetry, rules)
            tools.update({w.id: tool_workflows.workflow_tool(w, lent, self.state.run_id) for w in workflows})
        client_tools = options.client_tools
        client_names = {t.name for t in client_tools} if client_tools else set()
        for client_tool in client_tools or ():

            async def ask_client(args: Any, ctx: ToolContext) -> Any:
                return await self.state.await_client_tool(ctx.tool_call_id)  # answered through Connect

            tools[client_tool.name] = Tool(
                client_tool.name, client_tool.description, ask_client, client_tool.input_schema
            )
        writer = Writer(self.emit_processed, self.keep_data_part)
        lanes = reused_lanes(agent, options) or await resolve_lanes(agent, options, context)
        self.runner = runner = self._runner(lanes, context, writer)
        model = resolve_model(model_spec)  # fail set-up, not the stream, on a model no run can use
        if options.structured_output is not None and options.structured_output.model is not None:
            resolve_model(options.structured_output.model)
        run = LoopContext(
            self.state, runner, self.ml, self.result.steps, self.trace, self.emit_processed, self.emit_unprocessed
        )
        model_call = ModelCall(  # fallbacks, retry cap, client tools, payload rules, models
            run,
            agent.fallback_models,
            self._error_retry_cap(options),
            client_names,
            agent.tool_transform,
            {model_spec: model},
        )

        # A payload past the processors that no chunk keeps is not made (here and below).
        if self.state.keeps_chunks:
            self.emit_unprocessed(Start(agent.id, self.result.thread_id, self.result.resource_id))
        else:
            self.seq = 1  # counted as though it went out: _end_failed tells later failures by it
        for signal in self.state.opening_signals:  # the signal that woke this run
            self.emit_unprocessed(SignalEcho(signal))
        # Below, a hook no processor implements costs no coroutine: its call is skipped.
        try:
            if runner.on_input:
                await runner.run_input(self.ml)
            await self._steps(options, model_spec, tools, context, model_call, run, writer)
            if self.last_step_input is not None and self.last_step_input.structured_output is not None:
                await self._structured_object(model_call, self.last_step_input)
            self.trace.end_phase("result")
            if runner.on_output_result:
                await runner.run_output_result(self.ml, OutputResult.of(self.result.steps))
        except TripWire as tripwire:
            self._end_tripwire(tripwire)
            return
        self._finish(options)
        for callback in self._on_success:
            try:
                await maybe_await(callback(self.result))
            except Exception as error:
                raise_if_cancelling(error)
                log.exception("an on_success callback of run %s failed; ignored", self.state.run_id)

    def _runner(self, lanes: Lanes, context: dict[str, Any], writer: Writer) -> ProcessorRunner:
        trace = self.trace
        ctx = RunnerContext(  # (positional: a keyword call into a dataclass __init__ costs more)
            self.state.run_id,
            self.agent,
            context,
            writer,
            self.state.cancelled,
            self._send_signal_for,
            self._on_success.append,
            self._on_finish.append,
            trace if trace.span is not None else None,
            trace.metrics,
            self.result.findings,
        )
        return ProcessorRunner(ctx, input=lanes.input, output=lanes.output, error=lanes.error, hooks=lanes.hooks)

    # ------------------------------------------------------------ steps

    def _step_retry_cap(self, options: ExecutionOptions) -> int | None:
        """Step retries (input/output step aborts) need an explicit cap."""
        if options.max_processor_retries is not None:
            return options.max_processor_retries
        return self.agent.max_processor_retries

    def _error_retry_cap(self, options: ExecutionOptions) -> int:
        own = bool(options.error_processors) or (options.error_processors is None and bool(self.agent.error_processors))
        return error_retry_cap(self.agent, self._step_retry_cap(options), own)

    def _retry_step(self, tripwire: TripWire, options: ExecutionOptions) -> bool:
        """Replays the step with the reason appended as a system reminder, when allowed."""
        assert self.runner is not None
        cap = self._step_retry_cap(options)
        if not tripwire.retry or cap is None or self.runner.retry_count >= cap:
            return False
        self.runner.retry_count += 1
        self.trace.event("agentd.retry", cause="tripwire", processor_id=tripwire.processor_id, reason=tripwire.message)
        reminder = create_signal("reactive", tripwire.message)
        self.ml.add(to_db_message(reminder), "context")
        return True

    async def _steps(
        self,
        options: ExecutionOptions,
        model_spec: str,
        tools: dict[str, Tool],
        context: dict[str, Any],
        model_call: ModelCall,
        run: LoopContext,
        writer: Writer,
    ) -> None:
        assert self.runner is not None
        runner = self.runner
        original_system, restore = self.ml.system_messages, False
        max_steps = options.effective_max_steps
        tool_calls: ToolCalls | None = None  # set up for the first step that calls a tool
        step_number = 0
        while step_number < max_steps:
            self.trace.end_phase("step", step_number)
            # Signals delivered meanwhile join here: at a model boundary, never
            # between a tool call and its result.
            if self.state.pending_signals:
                await self._take_pending_signals()
            message_id = new_id("msg_")
            self.current_message_id = message_id
            if restore:  # per-step system changes do not stick (the first step's are the original ones)
                self.ml.replace_all_system_messages(original_system)
            restore, copies = True, bool(runner.on_input_step)  # copies: its processors may change them in place
            step_input = StepInput(  # model, tools, tool choice, active tools, provider options, settings, structured
                model_spec,
                dict(tools) if copies else tools,
                options.tool_choice,
                options.active_tools,
                dict(options.provider_options or {}) if copies else options.provider_options or {},
                options.model_settings,
                options.structured_output,
            )
            try:
                if runner.on_input_step:
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
            self.last_step_input = step_input
            # (Every field positional: a default factory is a call in __init__.)
            step = StepResult(
                step_number, "", "", "unknown", None, _NO_USAGE, [], [], step_input.model, None, [], False, []
            )
            self._in_flight = (step, message_id)
            replayed = await model_call.call(step, step_input, message_id)

            assistant = step.assistant_message(message_id)
            self.ml.add(assistant, "response")
            self._in_flight = None
            try:
                if runner.on_output_step:
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
                step.tripwire = tripwire_record(tripwire)
                if self._retry_step(tripwire, options):
                    self.ml.remove_by_ids([message_id])
                    self.result.steps.append(step)
                    await self.emit_processed(step.finish_chunk(message_id, continues=True))
                    continue
                self.result.steps.append(step)
                raise

            continues = step.finish_reason == "tool-calls" and bool(step.tool_calls) and step_number + 1 < max_steps
            try:
                if step.tool_calls:
                    if tool_calls is None:
                        result = self.result
                        tool_calls = ToolCalls(
                            run,
                            agent=self.agent,
                            writer=writer,
                            thread_id=result.thread_id,
                            resource_id=result.resource_id,
                        )
                    await tool_calls.run(step, step_input.tools, options, context, assistant, replayed)
            except TripWire as tripwire:  # a data chunk a tool wrote was blocked
                step.tripwire = tripwire_record(tripwire)
                self.result.steps.append(step)
                raise
            self.result.steps.append(step)
            if runner.on_output_stream:
                await self.emit_processed(step.finish_chunk(message_id, continues=continues))
            elif self.state.keeps_chunks:  # what emit_processed does then, without a coroutine
                self.emit_unprocessed(step.finish_chunk(message_id, continues=continues))
            if not continues and not (self.state.pending_signals and step_number + 1 < max_steps):
                break  # a signal that arrived during the last step earns another turn
            step_number += 1
        self.state.closed_to_signals = True

    async def _structured_object(self, model_call: ModelCall, step_input: StepInput) -> None:
        """The object the run answers with (`step_input`: the last step's, with a
        structured output), also kept in the last assistant message's metadata
        (before the output processors, so memory saves it)."""
        assert step_input.structured_output is not None
        outcome = await structured_object(
            step_input.structured_output,
            self.result.steps,
            model=model_call.model,
            provider_options=step_input.provider_options,
            run_id=self.state.run_id,
        )
        self.result.warnings.extend(outcome.warnings)
        self.structuring_usage = outcome.usage
        if not outcome.found:
            return
        self.result.object = outcome.object
        last = next((m for m in reversed(self.ml.get_response()) if m.role == "assistant"), None)
        if last is not None:
            last.metadata = {**last.metadata, "structuredOutput": outcome.object}

    def _sub_agent_tool(self, name: str, sub: AgentDefinition, context: dict[str, Any]) -> Tool:
        async def delegate(args: Any) -> Any:
            prompt = args.get("prompt") if isinstance(args, dict) else str(args)
            return await self._run_nested(sub, str(prompt or ""), context, new_id(), self.state.run_id)

        schema = {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}
        return Tool(name, sub.description or f"Delegate to the {sub.name} agent", delegate, schema)

    async def _run_nested(
        self, sub: AgentDefinition, prompt: str, context: dict[str, Any], run_id: str, parent_run_id: str
    ) -> str:
        """Runs `sub` nested in this run's stream (a sub-agent's, or a workflow's
        agent step); its text, or RuntimeError with its error."""
        child = RunState(run_id)
        child.keeps_chunks = self.state.keeps_chunks  # (nested in this run's stream, or in none)
        child.on_finish_timeout = self.state.on_finish_timeout
        task = launch(
            child,
            sub,
            [Message.user(prompt)],
            ExecutionOptions(request_context=context),
            parent_run_id=parent_run_id,
            telemetry=self.telemetry,
        )
        try:
            async for batch in child.buffer.batches():  # nested in this run's stream, in order
                for chunk in batch:
                    self.state.buffer.append(chunk)
        except asyncio.CancelledError:
            # This run was aborted: so is the nested one, which would go on calling its model unseen.
            child.abort_reason = Abort("ABORTED", "the calling run was aborted")
            child.cancelled.set()
            child.stopping = True  # its work for after it too, once it has its result: none of it goes on
            if child.started:  # else its first step sees abort_reason and ends aborted
                task.cancel()
            raise
        outcome = await asyncio.shield(task)
        if outcome.error is not None:
            raise RuntimeError(outcome.error.message)
        return outcome.text

    # ------------------------------------------------------------ signals from outside

    async def _take_pending_signals(self) -> None:
        while self.state.pending_signals:
            signal = self.state.pending_signals.pop(0)
            message = to_db_message(signal, self.result.thread_id, self.result.resource_id)
            self.ml.add(message, "input")  # stored with the run's messages (transient ones are not)
            await self.emit_processed(SignalEcho(signal))

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
        ) -> Signal:
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
            await self.emit_processed(SignalEcho(signal))
            return signal

        return send_signal

    # ------------------------------------------------------------ endings

    async def _save_partial(self, abort: Abort) -> None:
        """persist_partial_on_abort: the thread keeps what the aborted run had
        (its input, the replies so far, the text streamed in the step the
        abort cut short), never an empty reply. A run whose lease was lost
        saves nothing: the thread may be another replica's already."""
        bound = self.context.get(MEMORY_THREAD_KEY)
        if not self.options.persist_partial_on_abort or bound is None or abort.reason == "LEASE_LOST":
            return
        if self._in_flight is not None:
            step, message_id = self._in_flight
            if step.text and self.ml.get(message_id) is None:
                self.ml.add(Message(role="assistant", parts=[TextPart(step.text)], id=message_id), "response")
        try:
            await self.agent.memory.save_partial(bound, self.ml)
        except Exception:  # the abort still goes out; what was said is lost, as without the option
            log.exception("run %s: could not save its partial output", self.state.run_id)

    def _finish(self, options: ExecutionOptions) -> None:
        result = self.result
        result.add_up(self.structuring_usage, self.ml.get_response())
        last = result.steps[-1]
        result.finish_reason = last.finish_reason
        result.raw_finish_reason = last.raw_finish_reason
        if self.state.keeps_chunks:
            self.emit_unprocessed(result.finish_chunk())

    def _end_tripwire(self, tripwire: TripWire) -> None:
        """A tripwire is not an error: a tripwire chunk, then finish with reason other."""
        self.state.set_ready()
        result = self.result
        result.tripwire = tripwire_record(tripwire)
        result.add_up(self.structuring_usage, self.ml.get_response())
        result.finish_reason = "other"
        self.emit_unprocessed(TripwireChunk(result.tripwire))
        self.emit_unprocessed(result.finish_chunk())
