"""The model interface the agent loop calls, and what a model call streams."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from agentd.runtime.chunks import FinishReason, Payload, Usage
from agentd.runtime.messages import Message
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the model is offered it: its name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """One provider call: the prompt (system messages first) and the step's settings."""

    prompt: list[Message]
    tools: list[ToolDefinition] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    provider_options: dict[str, Any] = field(default_factory=dict)
    structured_output: StructuredOutput | None = None
    step_number: int = 0


@dataclass(slots=True)
class ModelFinish:
    """The last event of a model call (not a chunk: the loop builds step-finish from it)."""

    finish_reason: FinishReason
    usage: Usage
    raw_finish_reason: str | None = None
    provider_metadata: dict[str, Any] | None = None
    type: str = "model-finish"


ModelEvent = Payload | ModelFinish


@dataclass(eq=False, repr=False)
class ModelAPIError(Exception):
    """A provider rejected or broke a call: one typed error for every provider."""

    message: str
    _: KW_ONLY
    status_code: int | None = None
    provider_code: str | None = None
    retryable: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)
        self.details = self.details or {}  # None from an untyped caller is no details


#: What a BatchedEvents stream is read as: lists of the events ready now and,
#: between them, awaitables to await (a pause; one may answer the next list,
#: or None for none).
EventBatch = list[ModelEvent] | Awaitable[list[ModelEvent] | None]


class BatchedEvents:
    """A model stream that hands over the events it has ready at once: the
    agent loop reads `items` (a plain iterator) and takes each list in one
    go, where an async generator costs a resume per event and a few thousand
    instructions to start and finish. What is ready before a failure comes
    before it, as one by one. Read as an async iterator it yields the events
    one by one, like any model stream."""

    __slots__ = ("_flat", "items")

    def __init__(self, items: Iterator[EventBatch]) -> None:
        self.items = items
        self._flat: AsyncGenerator[ModelEvent, None] | None = None

    def __aiter__(self) -> BatchedEvents:
        return self

    async def __anext__(self) -> ModelEvent:
        if self._flat is None:
            self._flat = _flatten(self.items)
        return await anext(self._flat)

    async def aclose(self) -> None:
        if self._flat is not None:
            await self._flat.aclose()
        close = getattr(self.items, "close", None)  # a generator's
        if close is not None:
            close()


def batches_of(stream: AsyncIterator[ModelEvent]) -> Iterator[EventBatch]:
    """`stream` read as BatchedEvents reads: its own items, or one event per list."""
    if type(stream) is BatchedEvents:
        return stream.items
    return iter(_OneByOne(stream))


class _OneByOne:
    __slots__ = ("_ended", "_events")

    def __init__(self, events: AsyncIterator[ModelEvent]) -> None:
        self._events = events
        self._ended = False

    def __iter__(self) -> Iterator[Awaitable[list[ModelEvent] | None]]:
        while not self._ended:
            yield self._next()

    async def _next(self) -> list[ModelEvent] | None:
        try:
            return [await anext(self._events)]
        except StopAsyncIteration:
            self._ended = True
            return None


async def _flatten(items: Iterator[EventBatch]) -> AsyncGenerator[ModelEvent, None]:
    for item in items:
        if not isinstance(item, list):
            got = await item
            if got is None:
                continue
            item = got
        for event in item:
            yield event


class LanguageModel(Protocol):
    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def spec(self) -> str:
        """ "provider/model"."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """The call's events; a BatchedEvents when the model can hand several over at once."""
        ...
