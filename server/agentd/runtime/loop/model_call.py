"""One step's model call, with everything that can stand between the step and
its answer: attachments downloaded for a model that cannot fetch them, the
error processors' retries, a cached answer replayed, and the agent's
fallback models."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from agentd.runtime.attachments import DOWNLOAD_ASSETS_FAILED, has_url_attachments, prepare_attachments
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import (
    Payload,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    StepStart,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Tripwire,
)
from agentd.runtime.clone import clone
from agentd.runtime.loop.prompt import build_prompt
from agentd.runtime.loop.readahead import ReadAhead
from agentd.runtime.loop.state import LoopContext
from agentd.runtime.messages import Message, ReasoningPart, ToolResultPart
from agentd.runtime.models.base import (
    BatchedEvents,
    EventBatch,
    LanguageModel,
    ModelAPIError,
    ModelEvent,
    ModelFinish,
    ModelRequest,
    ToolDefinition,
    batches_of,
)
from agentd.runtime.models.router import resolve_model
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice
from agentd.runtime.processors.base import CachedLLMResponse, TripWire
from agentd.runtime.processors.phases import StepInput
from agentd.runtime.results import StepResult
from agentd.runtime.structured_output import schema_note
from agentd.runtime.tool_payloads import ToolPayloadTransform, ToolPayloadTransformPolicy, show_call
from agentd.runtime.tools import Tool, payload_rules

log = logging.getLogger("agentd.run")
#: Model events the step keeps nothing of (no text, tool call or reasoning
#: block): without output-stream processors they are only emitted. Exact
#: types: a subclass goes the general way.
_EMITTED_ONLY = frozenset({TextStart, TextEnd, ReasoningStart, ToolCallEnd})
#: The events that come by the thousand, with no tool call or finish to see to.
_DELTAS = frozenset({TextDelta, ReasoningDelta})
#: The provider's defaults (ModelSettings is frozen: one instance serves every call).
_DEFAULT_SETTINGS = ModelSettings()


class ModelCall:
    """Makes the model calls of one run. It keeps one model instance per model
    (scripted models count their calls) and the run's attachment bookkeeping."""

    __slots__ = (
        "_attachments",
        "_client_tools",
        "_emit_processed",
        "_emit_unprocessed",
        "_error_retry_cap",
        "_fallback_models",
        "_ml",
        "_models",
        "_runner",
        "_state",
        "_steps",
        "_tool_transform",
        "_trace",
    )

    def __init__(
        self,
        run: LoopContext,
        fallback_models: Sequence[str],
        error_retry_cap: int,
        client_tools: set[str],
        tool_transform: ToolPayloadTransformPolicy | None,
        models: dict[str, LanguageModel],
    ) -> None:
        """`models`: instances set-up resolved already (by spec), in a dict the
        call takes as its own. (Positional: one is made per run.)"""
        self._state = run.state
        self._runner = run.runner
        self._ml = run.message_list
        self._steps = run.steps
        self._trace = run.trace
        self._emit_processed = run.emit_processed
        self._emit_unprocessed = run.emit_unprocessed
        self._fallback_models = tuple(fallback_models)
        self._error_retry_cap = error_retry_cap
        self._client_tools = client_tools
        self._tool_transform = tool_transform
        self._models = models
        #: Per-run attachment bookkeeping (attachments.prepare_attachments).
        self._attachments: dict[str, Any] = {}

    def _transform(self, name: str | None, tools: dict[str, Tool]) -> ToolPayloadTransform | None:
        """The payload rules of tool `name` (none for a client tool: its caller needs the real arguments)."""
        if name is None or name in self._client_tools:
            return None
        return payload_rules(self._tool_transform, name, tools.get(name))

    def model(self, spec: str) -> LanguageModel:
        model = self._models.get(spec)
        if model is None:
            model = self._models[spec] = resolve_model(spec)
        return model

    async def call(self, step: StepResult, step_input: StepInput, message_id: str) -> dict[str, ToolResultPart]:
        """Fills `step` with the model's answer (streamed through the output
        processors as it comes). Returns the tool results of a step replayed
        from a cache, by tool call id (empty otherwise): those tools do not run."""
        runner = self._runner
        model = self.model(step_input.model)
        spec = model.spec  # (asked once: a model's spec may be a property that formats it)
        tried: set[str] | None = None  # fallback models tried for this step (once one is)
        started = False
        placeholder_retry = False  # the one last retry for attachments nothing could recover
        while True:  # once, plus once per retry an error processor asks for
            self._state.raise_if_cancelled()  # no retry or fallback once aborted
            # The prompt is rebuilt on a retry: error processors repair the list.
            # (A hook no processor implements, or has work for, costs no coroutine: its call is skipped.)
            prompt, cached = build_prompt(self._ml), None
            wanted = runner.llm_request_work(spec) if runner.on_llm_request else None
            if wanted is not None:
                prompt, cached = await runner.run_llm_request(
                    wanted,
                    prompt,
                    model=spec,
                    step_number=step.step_number,
                    steps=self._steps,
                    message_list=self._ml,
                )
            structured = step_input.structured_output
            direct = structured if structured is not None and structured.model is None else None
            if structured is not None and direct is None:
                prompt = _with_schema_note(prompt, structured.schema)  # a structuring model makes the object
            settings = step_input.model_settings
            request = ModelRequest(  # (positional: a keyword call into a dataclass __init__ costs more)
                prompt,
                _tool_definitions(step_input.tools, step_input.active_tools, direct, step_input.tool_choice),
                step_input.tool_choice,
                settings if settings is not None else _DEFAULT_SETTINGS,
                step_input.provider_options,
                direct,
                step.step_number,
            )
            # Attachments the model cannot fetch itself are downloaded first; a
            # failed download is a ModelAPIError (DOWNLOAD_ASSETS_FAILED) the
            # error processors see like any provider failure.
            chat = self._trace.chat(spec, step.step_number, prompt, replayed=cached is not None)
            attachments_ok = True
            try:
                if cached is None and has_url_attachments(prompt):  # a cached answer needs no attachment
                    request = await prepare_attachments(request, model, self._ml, self._attachments)
            except ModelAPIError as error:
                attachments_ok = False
                download_error = error
            raw: list[ModelEvent] = []
            reader: ReadAhead | None = None
            text: list[str] = []
            reasoning: list[str] = []
            by_block: dict[str, str] = {}  # reasoning text per block id, until its end carries the signature
            streaming: dict[str, str] = {}  # tool name per tool call id, while its arguments stream
            if started:  # a retry: what the failed attempt streamed is not this one's (else `step` is new)
                step.reasoning_parts = []
                step.tool_calls = []
            finish: ModelFinish | None = None
            try:
                if not attachments_ok:
                    raise download_error
                events = _replay(cached) if cached is not None else model.stream(request)
                # A batching stream processor: one call per ready batch.
                if runner.on_output_stream and runner.prefetches_stream:
                    events = reader = ReadAhead(events, runner.prefetch_output_stream)
                self._state.set_ready()
                # No output-stream processor: an event goes out as it came (what
                # emit_processed would do), without a coroutine and a list per event.
                emit = None if runner.on_output_stream else self._emit_unprocessed
                if not started:
                    started = True
                    if emit is None or self._state.keeps_chunks:  # else nothing would see it
                        at = None if cached is not None else datetime.now(UTC)
                        begin = StepStart(step.step_number, message_id, spec, at)
                        if emit is not None:
                            emit(begin)
                        else:
                            await self._emit_processed(begin)
                keep_raw = bool(runner.on_llm_response)  # only response hooks read the raw events
                # What the stream has ready is taken in one go (BatchedEvents); another stream's one event at a time.
                for batch in batches_of(events):
                    if not isinstance(batch, list):  # a pause, or the next batch to wait for
                        got = await batch
                        if got is None:
                            continue
                        batch = got
                    for event in batch:
                        if keep_raw:  # a copy: output processors may change payloads in place
                            raw.append(clone(event))
                        if emit is not None:
                            if type(event) is TextDelta:  # the event that comes by the thousand
                                emit(event)
                                text.append(event.text)
                                continue
                            if type(event) in _EMITTED_ONLY:  # nothing to keep of it: no checks below
                                emit(event)  # type: ignore[arg-type]  # (a payload: the set holds no ModelFinish)
                                continue
                        if type(event) in _DELTAS:  # none of the checks below is a delta's
                            pass
                        elif isinstance(event, ModelFinish):
                            finish = event
                            continue
                        elif isinstance(event, ToolCall):  # tools run on what the model asked for
                            if event.call.tool_name in self._client_tools:
                                event.call.client_tool = True  # the caller answers it
                                self._state.expect_client_tool(event.call.tool_call_id)
                            step.tool_calls.append(event.call)
                            show_call(event.call, self._transform(event.call.tool_name, step_input.tools))
                        elif isinstance(event, ToolCallStart):
                            streaming[event.tool_call_id] = event.tool_name
                        elif isinstance(event, ToolCallDelta):
                            name = event.tool_name or streaming.get(event.tool_call_id)
                            rules = self._transform(name, step_input.tools)
                            if rules is not None and rules.args is not None:
                                # Withheld: the tool-call chunk shows the transformed arguments.
                                event.args_text_delta = ""
                        try:
                            # Text is what the caller sees: after output processors
                            # (a redacted or dropped delta is redacted or dropped here too).
                            payload: Payload = event  # type: ignore[assignment]  # (a ModelFinish went on above)
                            outs: Sequence[Payload]
                            if emit is not None:
                                emit(payload)
                                outs = (payload,)
                            else:
                                outs = await self._emit_processed(payload)
                            for out in outs:
                                if isinstance(out, TextDelta):
                                    text.append(out.text)
                                elif isinstance(out, ReasoningDelta):
                                    reasoning.append(out.text)
                                    by_block[out.id] = by_block.get(out.id, "") + out.text
                                elif isinstance(out, ReasoningEnd):
                                    end = out
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
                            step.tripwire = tripwire_record(tripwire)
                            self._steps.append(step)
                            chat.end(tripwire=tripwire.message)
                            raise
                if finish is None:
                    raise ModelAPIError("the model stream ended without a finish event", retryable=True)
            except ModelAPIError as error:
                chat.end(error=error)
                # A provider's SDK may turn the run's cancellation into an error
                # of its own: that is no failure to retry or fall back on.
                step.text, step.reasoning_text = "".join(text), "".join(reasoning)  # what went out, for an abort
                raise_if_cancelling(error)
                if await self._recover(error, step, message_id):
                    self._trace.event("agentd.retry", cause="api_error", reason=error.message)
                    continue
                if tried is None:
                    tried = set()
                fallback = self._next_fallback(spec, tried)
                if fallback is None:
                    if error.provider_code == DOWNLOAD_ASSETS_FAILED and not placeholder_retry:
                        # The turn does not fail for an attachment: on this retry
                        # prepare_attachments sends the URLs that failed again as
                        # "[Attachment unavailable: <name>]" placeholders.
                        placeholder_retry = True
                        continue
                    raise
                self._trace.event("agentd.fallback", failed_model=spec, model=fallback, reason=error.message)
                log.warning("model %s failed (%s); falling back to %s", spec, error, fallback)
                model = self.model(fallback)  # the error processors gave up: the next model's turn
                step.model = spec = model.spec
                continue
            except BaseException as exc:  # cancelled, or a failure the run reports: the span ends either way
                chat.end(error=exc)
                step.text, step.reasoning_text = "".join(text), "".join(reasoning)  # what went out, for an abort
                raise
            finally:
                if reader is not None:
                    reader.close()
                    reader = None
            break
        step.text, step.reasoning_text = "".join(text), "".join(reasoning)
        chat.end(
            finish_reason=finish.finish_reason,
            input_tokens=finish.usage.input_tokens,
            output_tokens=finish.usage.output_tokens,
            from_cache=cached is not None,
            text=step.text,
        )
        step.finish_reason = finish.finish_reason
        step.raw_finish_reason = finish.raw_finish_reason
        step.usage = finish.usage
        step.from_cache = cached is not None
        if cached is not None:
            step.warnings.extend(cached.warnings)
        if runner.on_llm_response:
            await runner.run_llm_response(
                raw,
                model=spec,
                step_number=step.step_number,
                steps=[*self._steps, step],
                from_cache=cached is not None,
            )
        return {r.tool_call_id: r for r in cached.tool_results} if cached is not None else {}

    def _next_fallback(self, failed: str, tried: set[str]) -> str | None:
        """The agent's next fallback model after `failed`, once each per step."""
        for spec in self._fallback_models:
            if spec != failed and spec not in tried:
                tried.add(spec)
                return spec
        return None

    async def _recover(self, error: ModelAPIError, step: StepResult, message_id: str) -> bool:
        """Runs the error processors; True when one asked for a retry within budget."""
        runner = self._runner
        if not runner.on_api_error or runner.retry_count >= self._error_retry_cap:
            return False
        retry = await runner.run_api_error(
            error, self._ml, step_number=step.step_number, steps=self._steps, message_id=message_id
        )
        if not retry or runner.retry_count >= self._error_retry_cap:
            return False
        runner.retry_count += 1
        return True


def tripwire_record(tripwire: TripWire) -> Tripwire:
    """The record of a processor's TripWire, as results and chunks carry it."""
    return Tripwire(tripwire.message, tripwire.retry, tripwire.metadata, tripwire.processor_id)


def _tool_definitions(
    tools: dict[str, Tool],
    active: tuple[str, ...] | None,
    schema_sent: StructuredOutput | None,
    tool_choice: ToolChoice | None,
) -> list[ToolDefinition]:
    # Tools are offered beside a schema, as Mastra does; a step that may call
    # none and is sent a schema drops them (the seed: tool_choice none keeps
    # the definitions unless the step also sends a structured-output schema).
    if not tools or (schema_sent is not None and tool_choice is not None and tool_choice.mode == "none"):
        return []
    return [
        ToolDefinition(t.name, t.description, t.input_schema)
        for t in tools.values()
        if active is None or t.name in active
    ]


def _with_schema_note(prompt: list[Message], schema: dict[str, Any]) -> list[Message]:
    """The prompt with the structuring note after its leading system messages."""
    at = next((i for i, m in enumerate(prompt) if m.role != "system"), len(prompt))
    return [*prompt[:at], Message.system(schema_note(schema)), *prompt[at:]]


def _replay(cached: CachedLLMResponse) -> BatchedEvents:
    return BatchedEvents(_replayed(cached))


def _replayed(cached: CachedLLMResponse) -> Iterator[EventBatch]:
    # Copies: a processor's cached response is never changed by the run replaying it.
    yield [clone(event) for event in cached.chunks]
