"""The processor runner: one per request.

It resolves which processors implement which hook once, when the request
starts (never per chunk: a chunk no processor wants costs one list check),
owns the per-request state map (one state per processor, see
`base.state_key_of`, shared by all of that processor's hooks and steps), and
applies what each hook returns.

A hook a workflow can take part in runs each lane entry, workflow or plain
processor, through `workflow.run_entry` with that hook's phase (phases.py).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from types import MappingProxyType
from typing import Any, NoReturn, TypedDict, TypeVar, Unpack

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Chunk, ReasoningDelta, StepFinish, TextDelta, ToolCallDelta
from agentd.runtime.messages import Message
from agentd.runtime.metrics import Metrics, processor_label
from agentd.runtime.models.base import ModelEvent
from agentd.runtime.processors.base import (
    APIErrorResult,
    CachedLLMResponse,
    Hook,
    HookArgs,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    ProcessorUnavailable,
    ProcessorViolation,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessToolResultArgs,
    TripWire,
    await_violation,
    check_hooks,
    implements,
    log,
    state_key_of,
)
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.processors.phases import (
    InputStepPhase,
    MessagePhase,
    Part,
    ProcessorRunError,
    StepInput,
    StepValue,
    StreamPhase,
    apply_messages,
    is_data,
)
from agentd.runtime.processors.stream_lane import StreamStep
from agentd.runtime.processors.workflow import ProcessorWorkflow, run_entry

#: Guard against a stream processor that keeps queueing chunks.
MAX_REPROCESS = 1000
#: The model events a batching stream processor is offered ahead: the ones that
#: come by the thousand (a step's start, finish and tool calls go one by one).
PREFETCHED = (TextDelta, ReasoningDelta, ToolCallDelta)

#: The state `wants_llm_request` is shown for a processor that has none yet.
_NO_STATE: Mapping[str, Any] = MappingProxyType({})

Entry = Any  # a Processor or a ProcessorWorkflow
A = TypeVar("A", bound=HookArgs)
_new = object.__new__


def args_from(cls: type[A], values: dict[str, Any]) -> A:
    """An instance of hook args class `cls` whose fields are `values` (a dict
    with exactly its fields as keys: the caller builds it so, and a unit test
    holds it to that), without the keyword call into its __init__ (some 16
    fields, for every hook call; HookArgs classes have no __post_init__ to skip)."""
    args: A = _new(cls)
    args.__dict__ = values
    return args


class ModelCall(TypedDict):
    """The step whose model call the provider-boundary hooks see (their args' shared fields)."""

    model: str
    step_number: int
    steps: list[Any]


@dataclass
class RunnerContext:
    run_id: str
    agent: Any
    request_context: dict[str, Any]
    writer: Any = None
    cancelled: Any = None
    send_signal_for: Callable[[str], Any] | None = None
    on_success: Callable[[Callable[[Any], Any]], None] | None = None
    on_finish: Callable[[Callable[[], Any]], None] | None = None
    #: The run's spans (a telemetry.RunTrace) when tracing is on.
    trace: Any = None
    #: The host's metrics (tripwires are counted by processor).
    metrics: Metrics | None = None
    #: Where the run records what processors reported without stopping it (HookArgs.report).
    findings: list[ProcessorViolation] | None = None


def _is_workflow(entry: Entry) -> bool:
    return isinstance(entry, ProcessorWorkflow)


def _implements(entry: Entry, hook: Hook) -> bool:
    if _is_workflow(entry):
        return any(implements(p, hook) for p in entry.processors())
    return implements(entry, hook)


def _processors(entries: Sequence[Entry]) -> list[Any]:
    return [p for e in entries for p in (e.processors() if _is_workflow(e) else [e])]


@dataclass(frozen=True, slots=True)
class HookTables:
    """Which lane entries run at which hook, their hooks checked: what a runner
    resolves from its lanes. Built once for lanes an agent reuses run after run
    (lanes.resolve_lanes); each run's runner still has its own states."""

    input: tuple[Entry, ...]
    output: tuple[Entry, ...]
    error: tuple[Entry, ...]
    on_input: tuple[Entry, ...]
    on_input_step: tuple[Entry, ...]
    on_llm_request: tuple[Any, ...]
    on_llm_response: tuple[Any, ...]
    on_output_stream: tuple[Entry, ...]
    on_output_step: tuple[Entry, ...]
    on_output_result: tuple[Entry, ...]
    on_tool_result: tuple[Any, ...]
    on_api_error: tuple[Any, ...]
    #: Each entry of on_llm_request beside its processor's `wants_llm_request`
    #: and state key, when it has one (None: its hook is always called).
    llm_request_wanted: tuple[tuple[Entry, tuple[Callable[[Mapping[str, Any], str], bool], Hashable] | None], ...]
    #: Each processor's `abort` (HookArgs.abort), by its id and lane kind: it
    #: depends on the processor alone, so runs of these lanes share it.
    aborts: dict[tuple[int, bool], Callable[..., NoReturn]] = field(default_factory=dict, compare=False)

    @classmethod
    def of(cls, input: Sequence[Entry] = (), output: Sequence[Entry] = (), error: Sequence[Entry] = ()) -> HookTables:
        lane_in, lane_out, lane_err = tuple(input), tuple(output), tuple(error)
        for processor in _processors([*lane_in, *lane_out, *lane_err]):
            check_hooks(processor)  # an agent's own processors are first seen here
        # The provider boundary: plain input processors, then error-lane processors
        # that rewrite prompts; an object in both lanes runs once, at its input position.
        plain_in = [p for p in lane_in if not _is_workflow(p)]
        on_llm_request = tuple(
            [p for p in plain_in if implements(p, "process_llm_request")]
            + [p for p in lane_err if implements(p, "process_llm_request") and not any(p is q for q in lane_in)]
        )
        return cls(
            input=lane_in,
            output=lane_out,
            error=lane_err,
            on_input=tuple(p for p in lane_in if _implements(p, "process_input")),
            on_input_step=tuple(p for p in lane_in if _implements(p, "process_input_step")),
            on_llm_request=on_llm_request,
            on_llm_response=tuple(p for p in plain_in if implements(p, "process_llm_response")),
            on_output_stream=tuple(p for p in lane_out if _implements(p, "process_output_stream")),
            on_output_step=tuple(p for p in lane_out if _implements(p, "process_output_step")),
            on_output_result=tuple(p for p in lane_out if _implements(p, "process_output_result")),
            on_tool_result=tuple(p for p in lane_out if implements(p, "process_tool_result") and not _is_workflow(p)),
            on_api_error=tuple(p for p in lane_err if implements(p, "process_api_error")),
            llm_request_wanted=tuple((p, _wanted(p)) for p in on_llm_request),
        )


def _wanted(processor: Any) -> tuple[Callable[[Mapping[str, Any], str], bool], Hashable] | None:
    wanted = getattr(processor, "wants_llm_request", None)
    return (wanted, state_key_of(processor)) if callable(wanted) else None


class ProcessorRunner:
    def __init__(
        self,
        ctx: RunnerContext,
        *,
        input: Sequence[Entry] = (),
        output: Sequence[Entry] = (),
        error: Sequence[Entry] = (),
        hooks: HookTables | None = None,
    ) -> None:
        """`hooks`: the lanes' tables resolved before (then `input`, `output` and `error` are theirs)."""
        self.ctx = ctx
        tables = hooks if hooks is not None else HookTables.of(input, output, error)
        self.hooks = tables
        self.states: dict[Hashable, dict[str, Any]] = {}
        #: Processor-requested retries so far (shared by every lane).
        self.retry_count = 0
        self.on_input = tables.on_input
        self.on_input_step = tables.on_input_step
        self.on_llm_request = tables.on_llm_request
        self.on_llm_response = tables.on_llm_response
        self.on_output_stream = tables.on_output_stream
        self.on_output_step = tables.on_output_step
        self.on_output_result = tables.on_output_result
        self.on_tool_result = tables.on_tool_result
        self.on_api_error = tables.on_api_error
        self._stream_parts: dict[Hashable, list[Chunk]] = {}
        #: The output-stream lane as prepared callers, built on the first chunk.
        self._stream_steps: dict[int, StreamStep] = {}
        self._stream_lane_steps: list[StreamStep | ProcessorWorkflow] | None = None
        self._stream_workflow_phase: StreamPhase | None = None
        self._common: dict[tuple[int, bool], dict[str, Any]] = {}
        #: Violations hooks reported without stopping; handed to on_violation after the hook.
        self._reported: list[tuple[Any, ProcessorViolation]] = []

    # ------------------------------------------------------------ plumbing

    def _abort_for(self, key: tuple[int, bool], processor: Any) -> Callable[..., NoReturn]:
        abort = self.hooks.aborts.get(key)
        if abort is None:
            verb = "Stream part blocked by" if key[1] else "Tripwire triggered by"
            # A partial, not a closure: a function defined per processor costs its signature each time.
            abort = self.hooks.aborts[key] = partial(_abort, processor, f"{verb} {processor.id}")
        return abort

    def common(self, processor: Any, *, stream: bool = False) -> dict[str, Any]:
        """The HookArgs fields every hook gets (a fresh dict: the args take it as theirs)."""
        return {**self._base(processor, stream), "retry_count": self.retry_count}

    def _base(self, processor: Any, stream: bool) -> dict[str, Any]:
        """The HookArgs fields every hook gets but `retry_count`; built once per
        processor and lane kind, since stream hooks run per chunk."""
        key = (id(processor), stream)
        base = self._common.get(key)
        if base is None:
            ctx = self.ctx
            base = self._common[key] = {
                "abort": self._abort_for(key, processor),
                "state": self.states.setdefault(state_key_of(processor), {}),  # the processor's, across the run
                "request_context": ctx.request_context,
                "writer": ctx.writer,
                "run_id": ctx.run_id,
                "agent": ctx.agent,
                "cancelled": ctx.cancelled,
                "on_success": ctx.on_success,
                # Over the list, not the runner: no cycle keeps a finished run for the collector.
                "report": lambda violation, reported=self._reported: reported.append((processor, violation)),
                "on_finish": ctx.on_finish,
            }
        return base

    async def call(self, processor: Any, hook: Hook, args: HookArgs) -> Any:
        trace = self.ctx.trace
        started = time.perf_counter() if trace is not None else 0.0
        tripped: str | None = None
        try:
            result = getattr(processor, hook)(args)
            # None (a hook that changes nothing) first: isawaitable walks the Awaitable ABC for it.
            if result is not None and inspect.isawaitable(result):
                result = await result
            if self._reported:
                await self._tell_reported()
            return result
        except TripWire as tripwire:
            tripped = tripwire.message
            await self._tripped(processor, tripwire)
            raise
        finally:
            if trace is not None:  # one span per processor per phase, not per call
                trace.processor_called(processor.id, hook, time.perf_counter() - started, tripped)

    async def _tripped(self, processor: Any, tripwire: TripWire) -> None:
        """What a hook's TripWire sets off before it propagates: the count, the
        violations reported so far, and the processor's on_violation."""
        if tripwire.processor_id is None:
            tripwire.processor_id = processor.id
        if self.ctx.metrics is not None:
            self.ctx.metrics.tripwire(processor_label(processor))
        if self._reported:
            await self._tell_reported()
        violation = ProcessorViolation(tripwire.processor_id, tripwire.message, tripwire.metadata)
        await await_violation(processor, violation)

    async def _tell_reported(self) -> None:
        reported = self._reported.copy()
        self._reported.clear()
        for processor, violation in reported:
            if self.ctx.findings is not None:  # the run's record (the guardrails' pass-through scorer reads it)
                self.ctx.findings.append(violation)
            await await_violation(processor, violation)

    def send_signal(self, processor: Any) -> Any:
        return self.ctx.send_signal_for(processor.id) if self.ctx.send_signal_for else None

    def stream_parts(self, processor: Any) -> list[Chunk]:
        return self._stream_parts.setdefault(state_key_of(processor), [])

    def in_llm_request(self, processor: Any) -> bool:
        return any(p is processor for p in self.on_llm_request)

    # ------------------------------------------------------------ processInput

    async def run_input(self, message_list: MessageList) -> None:
        def make(processor: Any, ml: MessageList, view: list[Message]) -> HookArgs:
            return ProcessInputArgs(
                messages=list(view), system_messages=ml.system_messages, message_list=ml, **self.common(processor)
            )

        phase = MessagePhase(self, "process_input", MessageList.get_input, make, source="input")
        for entry in self.on_input:
            await run_entry(entry, phase, message_list)

    # ------------------------------------------------------------ processInputStep

    async def run_input_step(
        self,
        step_input: StepInput,
        message_list: MessageList,
        *,
        step_number: int,
        steps: list[Any],
        message_id: str,
    ) -> StepInput:
        phase = InputStepPhase(self, step_number, steps, message_id)
        value = StepValue(message_list, step_input)
        for entry in self.on_input_step:
            value = await run_entry(entry, phase, value)
        return value.step_input

    # ------------------------------------------------------------ provider boundary

    def llm_request_work(self, model: str) -> list[Entry] | None:
        """The process_llm_request processors with work for this model call, in
        order (None: none has, and the pass is skipped): a processor without
        `wants_llm_request` always may; one with it, when that says so (asked
        once a call, with the processor's state, read only)."""
        states = self.states
        wanted: list[Entry] | None = None
        for processor, guard in self.hooks.llm_request_wanted:
            if guard is None or guard[0](states.get(guard[1]) or _NO_STATE, model):
                if wanted is None:
                    wanted = [processor]
                else:
                    wanted.append(processor)
        return wanted

    async def run_llm_request(
        self,
        processors: Sequence[Entry],
        prompt: list[Message],
        *,
        message_list: MessageList,
        model: str,
        step_number: int,
        steps: list[Any],
    ) -> tuple[list[Message], CachedLLMResponse | None]:
        """The provider boundary's pass over `processors` (`llm_request_work`'s)."""
        response: CachedLLMResponse | None = None
        for processor in processors:
            values = self._base(processor, False).copy()  # the args take the copy as theirs
            values["retry_count"] = self.retry_count
            values["model"] = model
            values["step_number"] = step_number
            values["steps"] = steps
            values["prompt"] = prompt
            values["message_list"] = message_list
            args = args_from(ProcessLLMRequestArgs, values)
            result = await self.call(processor, "process_llm_request", args)
            if result is None:
                continue
            if isinstance(result, dict):
                result = LLMRequestResult(**result)
            if not isinstance(result, LLMRequestResult):
                raise ProcessorRunError(
                    f"processor {processor.id!r}: process_llm_request returned {type(result).__name__}",
                    "PROCESSOR_INVALID_RESULT",
                )
            if result.prompt is not None:  # presence, not truthiness: [] is a real prompt
                prompt = result.prompt
            if result.response is not None and response is None:  # the first response wins
                response = result.response
        return prompt, response

    async def run_llm_response(self, chunks: list[ModelEvent], *, from_cache: bool, **call: Unpack[ModelCall]) -> None:
        for processor in self.on_llm_response:
            args = ProcessLLMResponseArgs(chunks=chunks, from_cache=from_cache, **call, **self.common(processor))
            await self.call(processor, "process_llm_response", args)

    # ------------------------------------------------------------ processOutputStream

    @property
    def wants_stream(self) -> bool:
        return bool(self.on_output_stream)

    @property
    def prefetches_stream(self) -> bool:
        """True when the first stream processor answers batches (`prefetch_output_stream`):
        its parts are the model's own, so it may see a batch before the parts come one by one."""
        first = self.on_output_stream[0] if self.on_output_stream else None
        return (
            first is not None and not _is_workflow(first) and callable(getattr(first, "prefetch_output_stream", None))
        )

    async def prefetch_output_stream(self, events: list[ModelEvent]) -> None:
        """Offers the first stream processor the model's waiting events (the deltas among
        them) as a batch; its per-part hook then answers them without a call of its own.
        A failure here is the per-part hook's to report (its policy applies there)."""
        payloads = [e for e in events if isinstance(e, PREFETCHED)]
        if len(payloads) < 2:
            return
        first = self.on_output_stream[0]
        args = HookArgs(**self.common(first, stream=True))
        try:
            await first.prefetch_output_stream(payloads, args)
        except (TripWire, ProcessorUnavailable):
            pass  # raised again, in order, by the part it concerns
        except Exception as error:
            raise_if_cancelling(error)
            log.exception("prefetch_output_stream of %r failed; its parts go one by one", first.id)

    def stream_step(self, processor: Any) -> StreamStep:
        """`processor`'s output-stream hook as this run calls it (prepared on first use)."""
        step = self._stream_steps.get(id(processor))
        if step is None:
            step = StreamStep.prepare(processor, self.stream_parts(processor), self.common(processor, stream=True))
            self._stream_steps[id(processor)] = step
        return step

    def _stream_lane(self) -> list[StreamStep | ProcessorWorkflow]:
        lane = [entry if _is_workflow(entry) else self.stream_step(entry) for entry in self.on_output_stream]
        self._stream_lane_steps = lane
        return lane

    async def run_output_stream(self, chunk: Chunk, message_list: MessageList | None) -> list[Chunk]:
        """The chunks to emit for one chunk (none when dropped), each chunk a
        processor queued with `emit_after` going through the whole chain after
        it. A TripWire propagates: the caller blocks the stream.

        Per chunk and processor this is one call (`call_stream`'s rules,
        inline: a chunk costs no coroutine per sync hook); a timed call (tracing
        on) and a workflow's processors go through `call_stream` itself."""
        lane = self._stream_lane_steps or self._stream_lane()
        inline = self.ctx.trace is None
        out: list[Chunk] = []
        queue: list[Chunk] | None = None  # emitted chunks still to go, next first
        part: Chunk | None = chunk
        rounds = 0
        while True:
            rounds += 1
            emitted: list[Chunk] = []
            emit_after = emitted.append
            assert part is not None
            data = is_data(part)
            for step in lane:
                if isinstance(step, ProcessorWorkflow):
                    value = await run_entry(step, self._stream_phase(message_list), Part(part, emitted))
                    result = value.chunk
                elif data and not getattr(step.processor, "process_data_parts", False):
                    continue  # data-* chunks bypass processors that did not opt in
                elif inline:
                    step.seen.append(part)
                    try:
                        result = step.hook(step.args(part, emit_after, message_list, self.retry_count))
                        if step.is_async:
                            result = await result
                    except Exception as error:
                        result = await self._stream_failed(step.processor, part, error)
                    else:
                        if self._reported or (result is not None and type(result) is not Chunk):
                            result = await self._stream_settle(step.processor, part, result)
                else:
                    result = await self.call_stream(step, part, emitted, message_list)
                if result is None:
                    part = None
                    break
                if result is not part:
                    part, data = result, is_data(result)
            if part is not None:
                out.append(part)
            if emitted:
                queue = emitted + queue if queue else emitted
            if not queue or rounds >= MAX_REPROCESS:
                return out
            part = queue.pop(0)

    def _stream_phase(self, message_list: MessageList | None) -> StreamPhase:
        phase = self._stream_workflow_phase
        if phase is None or phase.message_list is not message_list:
            phase = self._stream_workflow_phase = StreamPhase(self, message_list)
        return phase

    async def call_stream(
        self, step: StreamStep, part: Chunk, emitted: list[Chunk], message_list: MessageList | None
    ) -> Chunk | None:
        """One processor's process_output_stream on `part`: the chunk that goes
        on (None: dropped), timed for the run's trace."""
        step.seen.append(part)
        args = step.args(part, emitted.append, message_list, self.retry_count)
        processor = step.processor
        trace = self.ctx.trace
        started = time.perf_counter() if trace is not None else 0.0
        tripped: str | None = None
        try:
            try:
                result = step.hook(args)
                if step.is_async:
                    result = await result
            except Exception as error:
                return await self._stream_failed(processor, part, error)
            if self._reported or (result is not None and type(result) is not Chunk):
                result = await self._stream_settle(processor, part, result)
            return result
        except TripWire as tripwire:
            tripped = tripwire.message
            raise
        finally:
            if trace is not None:  # one span per processor per phase, not per call
                trace.processor_called(processor.id, "process_output_stream", time.perf_counter() - started, tripped)

    async def _stream_failed(self, processor: Any, part: Chunk, error: Exception) -> Chunk:
        """A stream hook raised: a TripWire (after its violation is told) and a
        processor that must not be skipped propagate, and so does a cancellation
        the hook turned into an error; anything else is logged and the chunk
        passes unchanged."""
        if isinstance(error, TripWire):
            await self._tripped(processor, error)
            raise error
        if isinstance(error, ProcessorUnavailable):
            raise error
        raise_if_cancelling(error)
        log.error("process_output_stream of %r failed; the chunk passes unchanged", processor.id, exc_info=error)
        return part

    async def _stream_settle(self, processor: Any, part: Chunk, result: Any) -> Chunk | None:
        """A stream hook's result that is not simply a chunk or None, or one
        with violations reported: awaited if a plain function returned an
        awaitable, the violations told, and anything but a chunk or None
        logged (the chunk passes unchanged)."""
        if inspect.isawaitable(result):
            try:
                result = await result
            except Exception as error:
                return await self._stream_failed(processor, part, error)
        if self._reported:
            await self._tell_reported()
        if result is None or isinstance(result, Chunk):
            return result
        log.error("process_output_stream of %r returned %s; the chunk passes unchanged", processor.id, type(result))
        return part

    # ------------------------------------------------------------ processOutputStep / Result / ToolResult

    async def run_output_step(
        self,
        message_list: MessageList,
        *,
        step_number: int,
        finish_reason: Any,
        tool_calls: list[Any],
        text: str,
        usage: Any,
        steps: list[Any],
    ) -> None:
        def make(processor: Any, ml: MessageList, view: list[Message]) -> HookArgs:
            return ProcessOutputStepArgs(
                messages=list(view),
                message_list=ml,
                step_number=step_number,
                finish_reason=finish_reason,
                tool_calls=list(tool_calls),
                text=text,
                usage=usage,
                system_messages=ml.system_messages,
                steps=steps,
                send_signal=self.send_signal(processor),
                **self.common(processor),
            )

        phase = MessagePhase(self, "process_output_step", MessageList.get_all, make, empty_is_noop=True)
        for entry in self.on_output_step:
            await run_entry(entry, phase, message_list)

    async def run_output_result(self, message_list: MessageList, result: Any) -> None:
        def make(processor: Any, ml: MessageList, view: list[Message]) -> HookArgs:
            return ProcessOutputResultArgs(
                messages=list(view),
                message_list=ml,
                result=result,
                system_messages=ml.system_messages,
                send_signal=self.send_signal(processor),
                **self.common(processor),
            )

        phase = MessagePhase(self, "process_output_result", MessageList.get_response, make)
        for entry in self.on_output_result:
            await run_entry(entry, phase, message_list)

    async def run_tool_result(self, message_list: MessageList, **fields_: Any) -> None:
        for processor in self.on_tool_result:
            view = message_list.get_all()
            args = ProcessToolResultArgs(
                messages=list(view),
                message_list=message_list,
                system_messages=message_list.system_messages,
                **fields_,
                **self.common(processor),
            )
            result = await self.call(processor, "process_tool_result", args)
            apply_messages(result, message_list, view, processor, "response")

    # ------------------------------------------------------------ processAPIError

    async def run_api_error(
        self,
        error: BaseException,
        message_list: MessageList,
        *,
        step_number: int,
        steps: list[Any],
        message_id: str,
    ) -> bool:
        """True when an error processor asked for a retry (the first one wins)."""
        for processor in self.on_api_error:
            view = message_list.get_all()
            args = ProcessAPIErrorArgs(
                error=error,
                messages=list(view),
                message_list=message_list,
                step_number=step_number,
                steps=steps,
                message_id=message_id,
                send_signal=self.send_signal(processor),
                **self.common(processor),
            )
            try:
                result = await self.call(processor, "process_api_error", args)
            except (TripWire, ProcessorUnavailable):
                raise
            except Exception as error:
                raise_if_cancelling(error)
                log.exception("process_api_error of %r failed; trying the next processor", processor.id)
                continue
            if isinstance(result, dict):
                result = APIErrorResult(retry=bool(result.get("retry")))
            if isinstance(result, APIErrorResult) and result.retry:
                return True
        return False


def _abort(
    processor: Any,
    default_reason: str,
    reason: str | None = None,
    *,
    retry: bool = False,
    metadata: dict[str, Any] | None = None,
) -> NoReturn:
    """HookArgs.abort, bound to its processor and the reason it gives by default."""
    raise TripWire(reason or default_reason, retry=retry, metadata=metadata, processor_id=processor.id)


def is_intermediate_step_finish(payload: Any) -> bool:
    """A step-finish before a tool round: it passes the output-stream processors by."""
    return isinstance(payload, StepFinish) and payload.finish_reason == "tool-calls"
