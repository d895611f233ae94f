"""The chunks a run streams: one envelope (`Chunk`) around a typed payload.

Types follow the reference taxonomy (`text-delta`, `tool-call`, `finish`, ...):
`chunk.type` names the payload, `chunk.payload` holds its typed fields.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from agentd.runtime.messages import JSON, FilePart, Message, Signal, ToolCallPart, ToolResultPart

FinishReason = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "other", "unknown", "tripwire", "retry"
]
#: Who a chunk comes from.
ChunkSource = Literal["agent", "user", "system", "workflow"]


@dataclass(slots=True)
class Usage:
    """Tokens a model call (or a run, summed with `+`) used; None where the provider did not say."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None

    def __add__(self, other: Usage) -> Usage:
        # Each count is None only where neither side said. (Written out: a
        # call per count would cost more than the sums; a run adds per step.)
        x, y = self.input_tokens, other.input_tokens
        input_tokens = None if x is None and y is None else (x or 0) + (y or 0)
        x, y = self.output_tokens, other.output_tokens
        output_tokens = None if x is None and y is None else (x or 0) + (y or 0)
        x, y = self.total_tokens, other.total_tokens
        total_tokens = None if x is None and y is None else (x or 0) + (y or 0)
        x, y = self.reasoning_tokens, other.reasoning_tokens
        reasoning_tokens = None if x is None and y is None else (x or 0) + (y or 0)
        x, y = self.cached_input_tokens, other.cached_input_tokens
        cached_input_tokens = None if x is None and y is None else (x or 0) + (y or 0)
        x, y = self.cache_creation_input_tokens, other.cache_creation_input_tokens
        cache_creation = None if x is None and y is None else (x or 0) + (y or 0)
        return Usage(input_tokens, output_tokens, total_tokens, reasoning_tokens, cached_input_tokens, cache_creation)


@dataclass(slots=True)
class Tripwire:
    """Why a processor stopped the run, and whether the step may run again (`retry`)."""

    reason: str
    retry: bool = False
    metadata: dict[str, JSON] | None = None
    processor_id: str | None = None


@dataclass(slots=True)
class Start:
    """`start`: the run began."""

    agent_id: str = ""
    thread_id: str | None = None
    resource_id: str | None = None
    type: Literal["start"] = "start"


@dataclass(slots=True)
class StepStart:
    """`step-start`: a model call (one step of the run) began."""

    step_number: int
    message_id: str
    model: str = ""
    started_at: datetime | None = None
    warnings: list[str] = field(default_factory=list)
    type: Literal["step-start"] = "step-start"


@dataclass(slots=True)
class TextStart:
    """`text-start`: a text part `id` of the reply began."""

    id: str
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["text-start"] = "text-start"


@dataclass(slots=True)
class TextDelta:
    """`text-delta`: more of text part `id`."""

    id: str
    text: str
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["text-delta"] = "text-delta"


@dataclass(slots=True)
class TextEnd:
    """`text-end`: text part `id` is complete."""

    id: str
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["text-end"] = "text-end"


@dataclass(slots=True)
class ReasoningStart:
    """`reasoning-start`: a reasoning part `id` began."""

    id: str
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["reasoning-start"] = "reasoning-start"


@dataclass(slots=True)
class ReasoningDelta:
    """`reasoning-delta`: more of reasoning part `id`."""

    id: str
    text: str
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["reasoning-delta"] = "reasoning-delta"


@dataclass(slots=True)
class ReasoningEnd:
    """`reasoning-end`: reasoning part `id` is complete, with the provider's signature if any."""

    id: str
    signature: str | None = None
    redacted_data: bytes | None = None
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["reasoning-end"] = "reasoning-end"


@dataclass(slots=True)
class ToolCallStart:
    """`tool-call-input-streaming-start`: the model began a tool call's arguments."""

    tool_call_id: str
    tool_name: str
    provider_executed: bool = False
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["tool-call-input-streaming-start"] = "tool-call-input-streaming-start"


@dataclass(slots=True)
class ToolCallDelta:
    """`tool-call-delta`: more of a tool call's arguments, as JSON text."""

    tool_call_id: str
    args_text_delta: str
    tool_name: str | None = None
    type: Literal["tool-call-delta"] = "tool-call-delta"


@dataclass(slots=True)
class ToolCallEnd:
    """`tool-call-input-streaming-end`: a tool call's arguments are complete."""

    tool_call_id: str
    type: Literal["tool-call-input-streaming-end"] = "tool-call-input-streaming-end"


@dataclass(slots=True)
class ToolCall:
    """`tool-call`: a complete tool call."""

    call: ToolCallPart
    type: Literal["tool-call"] = "tool-call"


@dataclass(slots=True)
class ToolResult:
    """`tool-result`: what a tool call returned."""

    result: ToolResultPart
    type: Literal["tool-result"] = "tool-result"


@dataclass(slots=True)
class StepFinish:
    """`step-finish`: a step ended, with its finish reason and usage."""

    step_number: int
    message_id: str
    finish_reason: FinishReason
    usage: Usage
    raw_finish_reason: str | None = None
    is_continued: bool = False
    provider_metadata: dict[str, JSON] | None = None
    model: str = ""
    tripwire: Tripwire | None = None
    warnings: list[str] = field(default_factory=list)
    type: Literal["step-finish"] = "step-finish"


@dataclass(slots=True)
class Finish:
    """`finish`: the run ended, with its response messages and total usage (terminal)."""

    finish_reason: FinishReason
    usage: Usage
    total_usage: Usage
    response_messages: list[Message] = field(default_factory=list)
    raw_finish_reason: str | None = None
    provider_metadata: dict[str, JSON] | None = None
    model: str = ""
    object: JSON = None
    tripwire: Tripwire | None = None
    type: Literal["finish"] = "finish"


@dataclass(slots=True)
class Error:
    """`error`: the run failed (terminal); `reason` is the machine-readable cause."""

    message: str
    reason: str = "RUN_FAILED"
    status_code: int | None = None
    provider_code: str | None = None
    retryable: bool = False
    details: dict[str, JSON] | None = None
    type: Literal["error"] = "error"


@dataclass(slots=True)
class Abort:
    """`abort`: the run was aborted (terminal)."""

    reason: str = "ABORTED"
    message: str = ""
    type: Literal["abort"] = "abort"


@dataclass(slots=True)
class TripwireChunk:
    """`tripwire`: a processor stopped the run."""

    tripwire: Tripwire
    type: Literal["tripwire"] = "tripwire"


@dataclass(slots=True)
class Data:
    """A custom `data-*` chunk: its `type` is the data type itself."""

    type: str
    data: JSON = None
    id: str | None = None
    transient: bool = False


@dataclass(slots=True)
class SignalEcho:
    """`signal`: a signal the run received, as it entered the conversation."""

    signal: Signal
    type: Literal["signal"] = "signal"


@dataclass(slots=True)
class File:
    """`file`: a file the model produced."""

    file: FilePart
    type: Literal["file"] = "file"


@dataclass(slots=True)
class Source:
    """`source`: a source the model cited."""

    id: str
    source_type: str
    title: str = ""
    url: str | None = None
    media_type: str | None = None
    filename: str | None = None
    provider_metadata: dict[str, JSON] | None = None
    type: Literal["source"] = "source"


@dataclass(slots=True)
class ObjectPartial:
    """`object`: the structured output as far as it has streamed."""

    object: JSON
    type: Literal["object"] = "object"


@dataclass(slots=True)
class ResponseMetadata:
    """`response-metadata`: the provider's response id, model and time."""

    response_id: str | None = None
    model_id: str | None = None
    time: datetime | None = None
    type: Literal["response-metadata"] = "response-metadata"


Payload = (
    Start
    | StepStart
    | TextStart
    | TextDelta
    | TextEnd
    | ReasoningStart
    | ReasoningDelta
    | ReasoningEnd
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | ToolCall
    | ToolResult
    | StepFinish
    | Finish
    | Error
    | Abort
    | TripwireChunk
    | Data
    | SignalEcho
    | File
    | Source
    | ObjectPartial
    | ResponseMetadata
)

#: Chunks after which a run emits nothing more.
TERMINAL_TYPES = frozenset({"finish", "error", "abort"})


@dataclass(slots=True)
class Chunk:
    """One chunk of a run: `seq` is its 1-based position in the run, `offset`
    its position in the thread's log (0 outside a thread subscription)."""

    payload: Payload
    run_id: str
    seq: int
    parent_run_id: str | None = None
    offset: int = 0
    source: ChunkSource = "agent"
    metadata: dict[str, JSON] | None = None

    @property
    def type(self) -> str:
        return self.payload.type
