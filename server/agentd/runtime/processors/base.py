"""The Processor interface: hooks, their one-dataclass arguments, and results.

A processor implements any subset of the hooks. Each hook takes one args
dataclass (keyword-only fields with defaults, so fields can be added without
breaking processors) and may be sync or async. The lane a processor sits in
decides which of its hooks run.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, Protocol, get_args

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Chunk, FinishReason, Usage
from agentd.runtime.errors import InvalidArgument, Unavailable
from agentd.runtime.messages import Message, ToolCallPart, ToolResultPart
from agentd.runtime.models.base import ModelEvent
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.results import StepResult

if TYPE_CHECKING:
    from agentd.runtime.signals import Signal
    from agentd.runtime.tools import Tool

#: The hooks a processor may implement. A `process_*` method by any other name
#: is refused where processors are taken up (`check_hooks`): a misspelt hook
#: would otherwise never run.
Hook = Literal[
    "process_input",
    "process_input_step",
    "process_llm_request",
    "process_llm_response",
    "process_output_stream",
    "process_output_step",
    "process_output_result",
    "process_tool_result",
    "process_api_error",
]
HOOKS: Final[tuple[Hook, ...]] = get_args(Hook)
#: `process_*` attributes that are settings, not hooks.
HOOK_SETTINGS: Final = ("process_data_parts",)

log = logging.getLogger("agentd.processors")


class TripWire(Exception):
    """Raised by `abort()`: ends the run (or, with retry, the step) as a tripwire."""

    def __init__(
        self,
        message: str,
        *,
        retry: bool = False,
        metadata: dict[str, Any] | None = None,
        processor_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry
        self.metadata = metadata
        self.processor_id = processor_id


class ProcessorUnavailable(Unavailable):
    """A processor that must not be skipped could not run (a remote processor
    with `on_error = "fail-closed"`): the run fails, whichever hook raised it."""


@dataclass(frozen=True, slots=True)
class ProcessorViolation:
    """What a processor found wrong, as a run's error details name it."""

    processor_id: str
    message: str
    detail: Any = None


class Abort(Protocol):
    def __call__(
        self, reason: str | None = None, *, retry: bool = False, metadata: dict[str, Any] | None = None
    ) -> NoReturn: ...


class Writer(Protocol):
    """Emits custom `data-*` chunks into the live stream."""

    async def custom(self, type: str, data: Any = None, *, id: str | None = None, transient: bool = False) -> None: ...


class SendSignal(Protocol):
    async def __call__(
        self,
        *,
        type: str = "reactive",
        contents: Any = "",
        tag_name: str | None = None,
        attributes: Any = None,
        metadata: dict[str, Any] | None = None,
        transient: bool | None = None,
        id: str | None = None,
    ) -> Signal: ...


def _never(reason: str | None = None, *, retry: bool = False, metadata: dict[str, Any] | None = None) -> NoReturn:
    raise TripWire(reason or "Tripwire triggered", retry=retry, metadata=metadata)


def _unattended(violation: ProcessorViolation) -> None:
    log.warning("violation %r reported outside a processor runner; nobody was told", violation.message)


@dataclass(kw_only=True)
class HookArgs:
    """What every hook gets."""

    #: Raises a TripWire: `abort("reason", retry=True, metadata={...})`.
    abort: Abort = _never
    #: This processor's state for the request: shared by all its hooks and steps.
    state: dict[str, Any] = field(default_factory=dict)
    #: Processor-requested retries already performed in this run (shared counter).
    retry_count: int = 0
    request_context: dict[str, Any] = field(default_factory=dict)
    writer: Writer | None = None
    run_id: str = ""
    agent: Any = None
    #: Set when the run is aborted: pass it to long-running work.
    cancelled: asyncio.Event | None = None
    #: Registers `callback(run_result)` to run once the run has finished with
    #: no error and no tripwire (e.g. to commit a cache write).
    on_success: Callable[[Callable[[Any], Any]], None] | None = None
    #: Reports a violation that does not stop the run (a `warn` strategy): the
    #: runner calls the processor's `on_violation` once the hook has returned,
    #: awaiting it when it is async, so even a per-chunk hook need not wait.
    report: Callable[[ProcessorViolation], None] = _unattended
    #: Registers `callback()` (sync or async) to run once the run has ended,
    #: however it ended (e.g. to close a connection the processor opened for it).
    on_finish: Callable[[Callable[[], Any]], None] | None = None


@dataclass(kw_only=True)
class ProcessInputArgs(HookArgs):
    """`process_input`: the call's input messages, before the first step."""

    #: Only this call's new input messages (not history).
    messages: list[Message]
    system_messages: list[Message]
    message_list: MessageList


@dataclass(kw_only=True)
class ProcessInputStepArgs(HookArgs):
    """`process_input_step`: the messages and options of a step, before its model call."""

    #: Every message: history, input and earlier responses.
    messages: list[Message]
    message_list: MessageList
    step_number: int
    steps: list[StepResult]
    message_id: str
    system_messages: list[Message]
    model: str
    tools: dict[str, Tool]
    tool_choice: ToolChoice | None
    active_tools: tuple[str, ...] | None
    provider_options: dict[str, Any]
    model_settings: ModelSettings | None
    structured_output: StructuredOutput | None
    send_signal: SendSignal | None = None
    #: True when this processor's process_llm_request also runs for this step.
    llm_request_stage: bool = False


@dataclass(kw_only=True)
class StepOverrides:
    """What process_input_step may return (a dict with these keys works too).
    Each set field chains to the next processor."""

    model: str | None = None
    tools: dict[str, Tool] | None = None
    tool_choice: ToolChoice | None = None
    active_tools: tuple[str, ...] | None = None
    messages: list[Message] | None = None
    message_list: MessageList | None = None
    system_messages: list[Message] | None = None
    provider_options: dict[str, Any] | None = None
    model_settings: ModelSettings | None = None
    structured_output: StructuredOutput | None = None


@dataclass(kw_only=True)
class CachedLLMResponse:
    """A model response to replay instead of calling the model. The run replays
    copies: the object a processor returns is never changed."""

    chunks: list[ModelEvent]
    warnings: list[str] = field(default_factory=list)
    #: Results of this step's tool calls: replayed instead of running the tools again.
    tool_results: list[ToolResultPart] = field(default_factory=list)


@dataclass(kw_only=True)
class LLMRequestResult:
    """What process_llm_request may return. `prompt` replaces this call's prompt
    only (by presence: an empty list is honoured); the first `response` wins."""

    prompt: list[Message] | None = None
    response: CachedLLMResponse | None = None


@dataclass(kw_only=True)
class ModelCallArgs(HookArgs):
    """What the two hooks at the provider boundary share: the step whose model call it is."""

    model: str
    step_number: int
    steps: list[StepResult]


@dataclass(kw_only=True)
class ProcessLLMRequestArgs(ModelCallArgs):
    """`process_llm_request`: the prompt about to go to the provider."""

    #: The provider-bound prompt (system messages first; signals rendered).
    prompt: list[Message]
    message_list: MessageList | None = None


@dataclass(kw_only=True)
class ProcessLLMResponseArgs(ModelCallArgs):
    """`process_llm_response`: the model's chunks of a step, once it answered."""

    #: The model-side chunks of this step (live or replayed): copies the
    #: processor may keep, untouched by output processors.
    chunks: list[ModelEvent]
    from_cache: bool = False


@dataclass(kw_only=True)
class ProcessOutputStreamArgs(HookArgs):
    """`process_output_stream`: one chunk on its way to the caller."""

    part: Chunk
    #: Every chunk this processor was given so far, the current one included
    #: (the runner's own list: read it, do not change it).
    stream_parts: list[Chunk]
    message_list: MessageList | None = None
    #: Queue another chunk to go through the whole chain after this one.
    emit_after: Callable[[Chunk], None] | None = None


@dataclass(kw_only=True)
class ProcessOutputStepArgs(HookArgs):
    """`process_output_step`: a step's messages once it finished."""

    messages: list[Message]
    message_list: MessageList
    step_number: int
    finish_reason: FinishReason | None
    tool_calls: list[ToolCallPart]
    text: str
    usage: Usage
    system_messages: list[Message]
    steps: list[StepResult]
    send_signal: SendSignal | None = None


@dataclass(kw_only=True)
class ProcessToolResultArgs(HookArgs):
    """`process_tool_result`: a tool call's result, before the model sees it."""

    step_number: int
    tool_name: str
    tool_call_id: str
    args: Any
    result: Any
    messages: list[Message]
    message_list: MessageList
    system_messages: list[Message]
    steps: list[StepResult]
    provider_executed: bool = False


@dataclass(kw_only=True)
class OutputResult:
    """What a run produced: its text, usage, finish reason and steps."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    finish_reason: FinishReason = "unknown"
    steps: list[StepResult] = field(default_factory=list)

    @classmethod
    def of(cls, steps: list[StepResult]) -> OutputResult:
        """A run's result as its steps tell it: the text of those no tripwire
        blocked, the last step's usage and finish reason."""
        last = steps[-1] if steps else None
        return cls(
            text="".join([s.text for s in steps if s.tripwire is None]),
            usage=last.usage if last is not None else Usage(),
            finish_reason=last.finish_reason if last is not None else "unknown",
            steps=steps,
        )


@dataclass(kw_only=True)
class ProcessOutputResultArgs(HookArgs):
    """`process_output_result`: the run's response messages and result, before they are kept."""

    #: The response messages only.
    messages: list[Message]
    message_list: MessageList
    result: OutputResult
    system_messages: list[Message] = field(default_factory=list)
    #: A signal sent here joins the run's messages (saved with them) and the stream.
    send_signal: SendSignal | None = None


@dataclass(kw_only=True)
class ProcessAPIErrorArgs(HookArgs):
    """`process_api_error`: the error a model call raised."""

    error: BaseException
    messages: list[Message]
    message_list: MessageList
    step_number: int
    steps: list[StepResult]
    message_id: str = ""
    send_signal: SendSignal | None = None


@dataclass(kw_only=True)
class APIErrorResult:
    """What `process_api_error` decided: whether the step runs again."""

    retry: bool = False


class Processor:
    """Base class for processors. Set `id`; implement any hooks:

        process_input(ProcessInputArgs) -> list[Message] | {"messages", "system_messages"} | MessageList | None
        process_input_step(ProcessInputStepArgs) -> StepOverrides | dict | list[Message] | MessageList | None
        process_llm_request(ProcessLLMRequestArgs) -> LLMRequestResult | dict | None
        process_llm_response(ProcessLLMResponseArgs) -> None
        process_output_stream(ProcessOutputStreamArgs) -> Chunk | None   (None drops the chunk)
        process_output_step(ProcessOutputStepArgs) -> list[Message] | MessageList | None   ([] changes nothing)
        process_output_result(ProcessOutputResultArgs) -> list[Message] | MessageList | None
        process_tool_result(ProcessToolResultArgs) -> list[Message] | MessageList | None
        process_api_error(ProcessAPIErrorArgs) -> APIErrorResult | {"retry": True} | None

    Keep per-request data in `args.state`, never on the instance: instances
    are shared by concurrent requests.

    Optional, beside process_llm_request: `wants_llm_request(state, model) ->
    bool` (the processor's state, read only, and the model string); False when
    the hook would change nothing for this model call: it is not called then.
    """

    id: str = ""
    name: str | None = None
    description: str | None = None
    #: Also see `data-*` chunks in process_output_stream.
    process_data_parts: bool = False
    #: What the runner keys this processor's per-request state by (see
    #: `state_key_of`); None: the instance itself.
    state_key: Hashable | None = None
    #: Called with a ProcessorViolation on every abort and every warning; an
    #: async one is awaited before the run goes on.
    on_violation: Callable[[ProcessorViolation], Any] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} id={self.id!r}>"


def state_key_of(processor: object) -> Hashable:
    """The key of `processor`'s per-request state. Each instance has its own
    (two guards of one kind never share a count), except the instances the
    registry built from one entry (same name, id and options): that is one
    processor listed in several lanes, e.g. input and output."""
    key = getattr(processor, "state_key", None)
    return key if key is not None else ("instance", id(processor))


def implements(processor: object, hook: Hook) -> bool:
    return callable(getattr(processor, hook, None))


#: Class -> its unknown `process_*` names: runners check every request's processors.
_unknown_by_class: dict[type, tuple[str, ...]] = {}


def _unknown_in_class(cls: type) -> tuple[str, ...]:
    unknown = _unknown_by_class.get(cls)
    if unknown is None:
        unknown = _unknown_by_class[cls] = tuple(n for n in dir(cls) if _unknown(n))
    return unknown


def _unknown(name: str) -> bool:
    return name.startswith("process_") and name not in HOOKS and name not in HOOK_SETTINGS


def check_hooks(processor: object) -> None:
    """Raises InvalidArgument (PROCESSOR_UNKNOWN_HOOK) when `processor` (an
    instance or a class) has a `process_*` attribute that is neither a hook nor
    a setting: it would never be called. Checked per class once, then for the
    instance's own attributes."""
    cls = processor if isinstance(processor, type) else type(processor)
    own = {} if isinstance(processor, type) else getattr(processor, "__dict__", {})
    unknown = sorted({*_unknown_in_class(cls), *(n for n in own if _unknown(n))})
    if unknown:
        processor_id = getattr(processor, "id", "") or cls.__name__
        raise InvalidArgument.field(
            "processors",
            f"processor {processor_id!r} ({cls.__name__}) has {', '.join(unknown)}, "
            f"which is not a processor hook (the hooks: {', '.join(HOOKS)})",
            "PROCESSOR_UNKNOWN_HOOK",
        )


async def await_violation(processor: object, violation: ProcessorViolation) -> None:
    """Calls `processor.on_violation` and awaits it when it is async (the hook
    goes on once it has returned); its exceptions are logged, never raised."""
    callback = getattr(processor, "on_violation", None)
    if callback is None:
        return
    try:
        result = callback(violation)
        if inspect.isawaitable(result):
            await result
    except Exception as error:
        raise_if_cancelling(error)
        log.exception("on_violation of processor %r raised; ignored", getattr(processor, "id", processor))
