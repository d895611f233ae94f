"""The processor runner: one per request.

It resolves which processors implement which hook once, when the request
starts (never per chunk: a chunk no processor wants costs one list check),
owns the per-request state map (keyed by processor id, shared by all of that
processor's hooks and steps), and applies what each hook returns.
"""

from __future__ import annotations

import copy
import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, NoReturn

from agentd.runtime.chunks import Chunk, StepFinish
from agentd.runtime.messages import Message
from agentd.runtime.models.base import ModelEvent
from agentd.runtime.processors.base import (
    APIErrorResult,
    CachedLLMResponse,
    HookArgs,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    ProcessorViolation,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
    StepOverrides,
    TripWire,
    implements,
)
from agentd.runtime.processors.message_list import ExternalMessageListError, MessageList, Source
from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow

log = logging.getLogger("agentd.processors")

#: Guard against a stream processor that keeps queueing chunks.
MAX_REPROCESS = 1000

Entry = Any  # a Processor or a ProcessorWorkflow


class ProcessorRunError(Exception):
    """A processor broke the contract (e.g. returned a foreign MessageList)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def report_violation(processor: Any, violation: ProcessorViolation) -> None:
    """Calls `processor.on_violation`; its exceptions are logged, never raised."""
    callback = getattr(processor, "on_violation", None)
    if callback is None:
        return
    try:
        result = callback(violation)
        if inspect.isawaitable(result):
            # Fire and forget would lose errors; callbacks are expected to be quick.
            log.warning("on_violation of %s returned an awaitable; it was not awaited", processor)
            close = getattr(result, "close", None)
            if close is not None:
                close()
    except Exception:
        log.exception("on_violation of processor %r raised; ignored", getattr(processor, "id", processor))


@dataclass
class StepInput:
    """The running per-step configuration that process_input_step hooks chain."""

    model: str
    tools: dict[str, Any]
    tool_choice: Any
    active_tools: tuple[str, ...] | None
    provider_options: dict[str, Any]
    model_settings: Any
    structured_output: Any


@dataclass
class RunnerContext:
    run_id: str
    agent: Any
    request_context: dict[str, Any]
    writer: Any = None
    cancelled: Any = None
    send_signal_for: Callable[[str], Any] | None = None
    on_success: Callable[[Callable[[Any], Any]], None] | None = None
    #: The run's spans (a telemetry.RunTrace) when tracing is on.
    trace: Any = None


@dataclass
class _Lanes:
    input: list[Entry] = field(default_factory=list)
    output: list[Entry] = field(default_factory=list)
    error: list[Entry] = field(default_factory=list)


def _is_workflow(entry: Entry) -> bool:
    return isinstance(entry, ProcessorWorkflow)


def _implements(entry: Entry, hook: str) -> bool:
    if _is_workflow(entry):
        return any(implements(p, hook) for p in entry.processors())
    return implements(entry, hook)


class ProcessorRunner:
    def __init__(
        self,
        ctx: RunnerContext,
        *,
        input: Sequence[Entry] = (),
        output: Sequence[Entry] = (),
        error: Sequence[Entry] = (),
    ) -> None:
        self.ctx = ctx
        self.lanes = _Lanes(list(input), list(output), list(error))
        self.states: dict[str, dict[str, Any]] = {}
        #: Processor-requested retries so far (shared by every lane).
        self.retry_count = 0
        lane_in, lane_out = self.lanes.input, self.lanes.output
        self.on_input = [p for p in lane_in if _implements(p, "process_input")]
        self.on_input_step = [p for p in lane_in if _implements(p, "process_input_step")]
        # The provider boundary: plain input processors, then error-lane processors
        # that rewrite prompts; an object in both lanes runs once, at its input position.
        plain_in = [p for p in lane_in if not _is_workflow(p)]
        self.on_llm_request = [p for p in plain_in if implements(p, "process_llm_request")] + [
            p for p in self.lanes.error if implements(p, "process_llm_request") and not any(p is q for q in lane_in)
        ]
        self.on_llm_response = [p for p in plain_in if implements(p, "process_llm_response")]
        self.on_output_stream = [p for p in lane_out if _implements(p, "process_output_stream")]
        self.on_output_step = [p for p in lane_out if _implements(p, "process_output_step")]
        self.on_output_result = [p for p in lane_out if _implements(p, "process_output_result")]
        self.on_tool_result = [p for p in lane_out if implements(p, "process_tool_result") and not _is_workflow(p)]
        self.on_api_error = [p for p in self.lanes.error if implements(p, "process_api_error")]
        self._stream_parts: dict[str, list[Chunk]] = {}
        self._common: dict[tuple[int, bool], dict[str, Any]] = {}

    # ------------------------------------------------------------ plumbing

    def state(self, processor_id: str) -> dict[str, Any]:
        return self.states.setdefault(processor_id, {})

    def _abort_for(self, processor: Any, default_reason: str) -> Callable[..., NoReturn]:
        def abort(
            reason: str | None = None, *, retry: bool = False, metadata: dict[str, Any] | None = None
        ) -> NoReturn:
            raise TripWire(reason or default_reason, retry=retry, metadata=metadata, processor_id=processor.id)

        return abort

    def common(self, processor: Any, *, stream: bool = False) -> dict[str, Any]:
        """The HookArgs fields every hook gets; built once per processor and lane
        kind, since stream hooks run per chunk."""
        key = (id(processor), stream)
        base = self._common.get(key)
        if base is None:
            verb = "Stream part blocked by" if stream else "Tripwire triggered by"
            base = self._common[key] = {
                "abort": self._abort_for(processor, f"{verb} {processor.id}"),
                "state": self.state(processor.id),
                "request_context": self.ctx.request_context,
                "writer": self.ctx.writer,
                "run_id": self.ctx.run_id,
                "agent": self.ctx.agent,
                "cancelled": self.ctx.cancelled,
                "on_success": self.ctx.on_success,
            }
        return {**base, "retry_count": self.retry_count}

    async def call(self, processor: Any, hook: str, args: HookArgs) -> Any:
        trace = self.ctx.trace
        started = time.perf_counter() if trace is not None else 0.0
        tripped: str | None = None
        try:
            result = getattr(processor, hook)(args)
            if inspect.isawaitable(result):
                result = await result
            return result
        except TripWire as tripwire:
            if tripwire.processor_id is None:
                tripwire.processor_id = processor.id
            tripped = tripwire.message
            report_violation(processor, ProcessorViolation(tripwire.processor_id, tripwire.message, tripwire.metadata))
            raise
        finally:
            if trace is not None:  # one span per processor per phase, not per call
                trace.processor_called(processor.id, hook, time.perf_counter() - started, tripped)

    def _send_signal(self, processor: Any) -> Any:
        return self.ctx.send_signal_for(processor.id) if self.ctx.send_signal_for else None

    @staticmethod
    def _check_list(result: Any, message_list: MessageList, processor: Any) -> bool:
        """True when the hook returned the list it was given (already applied)."""
        if isinstance(result, MessageList):
            if result is not message_list:
                raise ProcessorRunError(
                    f"processor {processor.id!r} returned a MessageList it was not given",
                    ExternalMessageListError.reason,
                )
            return True
        return False

    # ------------------------------------------------------------ processInput

    async def run_input(self, message_list: MessageList) -> None:
        for entry in self.on_input:
            if _is_workflow(entry):
                await self._workflow_messages(entry, "process_input", message_list, "input")
                continue
            view = message_list.get_input()
            args = ProcessInputArgs(
                messages=list(view),
                system_messages=message_list.system_messages,
                message_list=message_list,
                **self.common(entry),
            )
            self._apply_input(await self.call(entry, "process_input", args), message_list, view, entry)

    def _apply_input(self, result: Any, message_list: MessageList, view: list[Message], processor: Any) -> None:
        if result is None or self._check_list(result, message_list, processor):
            return
        if isinstance(result, dict) and ("messages" in result or "system_messages" in result):
            if result.get("system_messages") is not None:
                message_list.replace_all_system_messages(list(result["system_messages"]))
            if result.get("messages") is not None:
                message_list.apply(list(result["messages"]), view, "input")
            return
        if isinstance(result, list):
            message_list.apply(result, view, "input")
            return
        raise ProcessorRunError(
            f"processor {processor.id!r}: process_input returned {type(result).__name__}",
            "PROCESSOR_INVALID_RESULT",
        )

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
        for entry in self.on_input_step:
            if not _is_workflow(entry):
                step_input = await self._one_input_step(entry, step_input, message_list, step_number, steps, message_id)
                continue
            for index, step in enumerate(entry.steps):
                if isinstance(step, MapStep):
                    continue
                if isinstance(step, ParallelStep):
                    # Each branch on its own copy; the mapped branch's changes continue.
                    select = entry.steps[index + 1].select
                    before = message_list.get_all()
                    chosen: tuple[MessageList, StepInput] | None = None
                    for branch in step.branches:
                        clone = message_list.clone()
                        out = step_input
                        if implements(branch, "process_input_step"):
                            out = await self._one_input_step(branch, step_input, clone, step_number, steps, message_id)
                        if f"processor:{branch.id}" == select:
                            chosen = (clone, out)
                    assert chosen is not None
                    message_list.apply(chosen[0].get_all(), before, "input")
                    message_list.replace_all_system_messages(chosen[0].system_messages)
                    step_input = chosen[1]
                elif implements(step, "process_input_step"):
                    step_input = await self._one_input_step(
                        step, step_input, message_list, step_number, steps, message_id
                    )
        return step_input

    async def _one_input_step(
        self,
        processor: Any,
        step_input: StepInput,
        message_list: MessageList,
        step_number: int,
        steps: list[Any],
        message_id: str,
    ) -> StepInput:
        view = message_list.get_all()
        args = ProcessInputStepArgs(
            messages=list(view),
            message_list=message_list,
            step_number=step_number,
            steps=steps,
            message_id=message_id,
            system_messages=message_list.system_messages,
            model=step_input.model,
            tools=dict(step_input.tools),
            tool_choice=step_input.tool_choice,
            active_tools=step_input.active_tools,
            provider_options=dict(step_input.provider_options),
            model_settings=step_input.model_settings,
            structured_output=step_input.structured_output,
            send_signal=self._send_signal(processor),
            llm_request_stage=any(p is processor for p in self.on_llm_request),
            **self.common(processor),
        )
        result = await self.call(processor, "process_input_step", args)
        if result is None or self._check_list(result, message_list, processor):
            return step_input
        if isinstance(result, list):
            message_list.apply(result, view, "input")
            return step_input
        if isinstance(result, dict):
            unknown = set(result) - {f.name for f in fields(StepOverrides)}
            if unknown:
                raise ProcessorRunError(
                    f"processor {processor.id!r}: process_input_step returned unknown keys {sorted(unknown)}",
                    "PROCESSOR_INVALID_RESULT",
                )
            result = StepOverrides(**result)
        if not isinstance(result, StepOverrides):
            raise ProcessorRunError(
                f"processor {processor.id!r}: process_input_step returned {type(result).__name__}",
                "PROCESSOR_INVALID_RESULT",
            )
        if result.messages is not None and result.message_list is not None:
            raise ProcessorRunError(
                f"processor {processor.id!r} returned both messages and message_list",
                "PROCESSOR_RETURNED_MESSAGES_AND_MESSAGE_LIST",
            )
        if result.message_list is not None:
            self._check_list(result.message_list, message_list, processor)
        if result.messages is not None:
            message_list.apply(result.messages, view, "input")
        if result.system_messages is not None:
            message_list.replace_all_system_messages(result.system_messages)
        changes = {
            name: getattr(result, name)
            for name in (
                "model",
                "tools",
                "tool_choice",
                "active_tools",
                "provider_options",
                "model_settings",
                "structured_output",
            )
            if getattr(result, name) is not None
        }
        return replace(step_input, **changes) if changes else step_input

    # ------------------------------------------------------------ provider boundary

    async def run_llm_request(
        self,
        prompt: list[Message],
        *,
        model: str,
        step_number: int,
        steps: list[Any],
        message_list: MessageList,
    ) -> tuple[list[Message], CachedLLMResponse | None]:
        response: CachedLLMResponse | None = None
        for processor in self.on_llm_request:
            args = ProcessLLMRequestArgs(
                prompt=prompt,
                model=model,
                step_number=step_number,
                steps=steps,
                message_list=message_list,
                **self.common(processor),
            )
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

    async def run_llm_response(
        self, chunks: list[ModelEvent], *, model: str, step_number: int, steps: list[Any], from_cache: bool
    ) -> None:
        for processor in self.on_llm_response:
            args = ProcessLLMResponseArgs(
                chunks=chunks,
                model=model,
                step_number=step_number,
                steps=steps,
                from_cache=from_cache,
                **self.common(processor),
            )
            await self.call(processor, "process_llm_response", args)

    # ------------------------------------------------------------ processOutputStream

    @property
    def wants_stream(self) -> bool:
        return bool(self.on_output_stream)

    async def run_output_stream(self, chunk: Chunk, message_list: MessageList | None) -> list[Chunk]:
        """The chunks to emit for one chunk (none when dropped). A TripWire
        propagates: the caller blocks the stream."""
        out: list[Chunk] = []
        queue: list[Chunk] = [chunk]
        rounds = 0
        while queue and rounds < MAX_REPROCESS:
            rounds += 1
            current: Chunk | None = queue.pop(0)
            extra: list[Chunk] = []
            for entry in self.on_output_stream:
                if current is None:
                    break
                current = await self._stream_entry(entry, current, message_list, extra.append)
            if current is not None:
                out.append(current)
            queue = extra + queue
        return out

    async def _stream_entry(
        self, entry: Entry, part: Chunk, message_list: MessageList | None, emit_after: Callable[[Chunk], None]
    ) -> Chunk | None:
        if _is_workflow(entry):
            for step_index, step in enumerate(entry.steps):
                if isinstance(step, MapStep):
                    continue
                if isinstance(step, ParallelStep):
                    select = entry.steps[step_index + 1].select
                    branch_results = {}
                    for branch in step.branches:
                        branch_results[f"processor:{branch.id}"] = await self._stream_one(
                            branch, copy.deepcopy(part), message_list, emit_after
                        )
                    part_or_none = branch_results[select]
                else:
                    part_or_none = await self._stream_one(step, part, message_list, emit_after)
                if part_or_none is None:
                    return None
                part = part_or_none
            return part
        return await self._stream_one(entry, part, message_list, emit_after)

    async def _stream_one(
        self,
        processor: Any,
        part: Chunk,
        message_list: MessageList | None,
        emit_after: Callable[[Chunk], None],
    ) -> Chunk | None:
        if not implements(processor, "process_output_stream"):
            return part
        if _is_data(part) and not getattr(processor, "process_data_parts", False):
            return part  # data-* chunks bypass processors that did not opt in
        seen = self._stream_parts.setdefault(processor.id, [])
        seen.append(part)
        args = ProcessOutputStreamArgs(
            part=part,
            stream_parts=seen,  # the live list (read-only for processors): no per-chunk copy
            message_list=message_list,
            emit_after=emit_after,
            **self.common(processor, stream=True),
        )
        try:
            result = await self.call(processor, "process_output_stream", args)
        except TripWire:
            raise
        except Exception:
            log.exception("process_output_stream of %r failed; the chunk passes unchanged", processor.id)
            return part
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
        def make(processor: Any, view: list[Message]) -> HookArgs:
            return ProcessOutputStepArgs(
                messages=list(view),
                message_list=message_list,
                step_number=step_number,
                finish_reason=finish_reason,
                tool_calls=list(tool_calls),
                text=text,
                usage=usage,
                system_messages=message_list.system_messages,
                steps=steps,
                send_signal=self._send_signal(processor),
                **self.common(processor),
            )

        for entry in self.on_output_step:
            await self._message_hook(
                entry,
                "process_output_step",
                message_list,
                message_list.get_all,
                make,
                "response",
                empty_is_noop=True,
            )

    async def run_output_result(self, message_list: MessageList, result: Any) -> None:
        def make(processor: Any, view: list[Message]) -> HookArgs:
            return ProcessOutputResultArgs(
                messages=list(view),
                message_list=message_list,
                result=result,
                system_messages=message_list.system_messages,
                **self.common(processor),
            )

        for entry in self.on_output_result:
            await self._message_hook(
                entry, "process_output_result", message_list, message_list.get_response, make, "response"
            )

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
            self._apply_messages(result, message_list, view, processor, "response")

    def _apply_messages(
        self,
        result: Any,
        message_list: MessageList,
        view: list[Message],
        processor: Any,
        source: Source,
        empty_is_noop: bool = False,
    ) -> None:
        if result is None or self._check_list(result, message_list, processor):
            return
        if not isinstance(result, list):
            raise ProcessorRunError(
                f"processor {processor.id!r} returned {type(result).__name__}", "PROCESSOR_INVALID_RESULT"
            )
        if empty_is_noop and not result:
            return  # validators end with `return []` on success: it changes nothing
        message_list.apply(result, view, source)

    async def _message_hook(
        self,
        entry: Entry,
        hook: str,
        message_list: MessageList,
        view_of: Callable[[], list[Message]],
        make: Callable[[Any, list[Message]], HookArgs],
        source: Source,
        *,
        empty_is_noop: bool = False,
    ) -> None:
        if not _is_workflow(entry):
            view = view_of()
            result = await self.call(entry, hook, make(entry, view))
            self._apply_messages(result, message_list, view, entry, source, empty_is_noop)
            return
        await self._workflow_messages(
            entry, hook, message_list, source, view_of=view_of, make=make, empty_is_noop=empty_is_noop
        )

    # ------------------------------------------------------------ workflows over messages

    async def _workflow_messages(
        self,
        workflow: ProcessorWorkflow,
        hook: str,
        message_list: MessageList,
        source: Source,
        *,
        view_of: Callable[[], list[Message]] | None = None,
        make: Callable[[Any, list[Message]], HookArgs] | None = None,
        empty_is_noop: bool = False,
    ) -> None:
        """Runs a workflow's steps for a message hook. Parallel branches each
        work on a copy; the map step's chosen branch is applied to the real list."""

        def default_view(ml: MessageList) -> list[Message]:
            return ml.get_input() if hook == "process_input" else ml.get_all()

        def view(ml: MessageList) -> list[Message]:
            if view_of is not None and ml is message_list:
                return view_of()
            if hook == "process_output_result":
                return ml.get_response()
            return default_view(ml)

        def args_for(processor: Any, ml: MessageList, v: list[Message]) -> HookArgs:
            if make is not None and ml is message_list:
                return make(processor, v)
            if hook == "process_input":
                return ProcessInputArgs(
                    messages=list(v),
                    system_messages=ml.system_messages,
                    message_list=ml,
                    **self.common(processor),
                )
            built = make(processor, v) if make is not None else None
            if built is None:
                raise ProcessorRunError(
                    f"workflow {workflow.id!r}: {hook} is not a workflow phase",
                    "PROCESSOR_WORKFLOW_INVALID_OUTPUT",
                )
            built.message_list = ml  # type: ignore[attr-defined]
            built.messages = list(v)  # type: ignore[attr-defined]
            return built

        async def run_on(processor: Any, ml: MessageList) -> None:
            if not implements(processor, hook):
                return
            v = view(ml)
            result = await self.call(processor, hook, args_for(processor, ml, v))
            if hook == "process_input":
                self._apply_input(result, ml, v, processor)
            else:
                self._apply_messages(result, ml, v, processor, source, empty_is_noop)

        for index, step in enumerate(workflow.steps):
            if isinstance(step, MapStep):
                continue
            if isinstance(step, ParallelStep):
                select = workflow.steps[index + 1].select  # type: ignore[union-attr]
                before = view(message_list)
                chosen: MessageList | None = None
                for branch in step.branches:
                    clone = message_list.clone()
                    await run_on(branch, clone)
                    if f"processor:{branch.id}" == select:
                        chosen = clone
                assert chosen is not None
                message_list.apply(view(chosen), before, source)
                if hook == "process_input":
                    message_list.replace_all_system_messages(chosen.system_messages)
            else:
                await run_on(step, message_list)

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
                send_signal=self._send_signal(processor),
                **self.common(processor),
            )
            try:
                result = await self.call(processor, "process_api_error", args)
            except TripWire:
                raise
            except Exception:
                log.exception("process_api_error of %r failed; trying the next processor", processor.id)
                continue
            if isinstance(result, dict):
                result = APIErrorResult(retry=bool(result.get("retry")))
            if isinstance(result, APIErrorResult) and result.retry:
                return True
        return False


def _is_data(chunk: Chunk) -> bool:
    return chunk.type.startswith("data-") or chunk.type == "signal"


def is_intermediate_step_finish(chunk: Chunk) -> bool:
    payload = chunk.payload
    return isinstance(payload, StepFinish) and payload.finish_reason == "tool-calls"


Hook = Callable[..., Awaitable[Any]]
