"""What the model adapters share, free of any provider SDK.

Reading a provider's entry of the provider options, the credentials error, the
retry rule for HTTP statuses, a model's identity (`provider/model`), the text
and reasoning parts a stream has open, a tool call that arrives whole, and an
SDK stream whose read failures become model errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

from agentd.runtime import chunks
from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.messages import ToolCallPart, new_id
from agentd.runtime.models.base import ModelEvent

JSONObject = dict[str, Any]
T = TypeVar("T")

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: Besides 5xx: timeout, conflict (a lock), rate limit.
_RETRYABLE_STATUSES = frozenset({408, 409, 429})


def snake_case(key: str) -> str:
    """`reasoningEffort` → `reasoning_effort`; snake_case keys are unchanged."""
    return _CAMEL_BOUNDARY.sub("_", key).lower()


def provider_options(options: Mapping[str, Any] | None, provider: str, where: str) -> JSONObject:
    """A copy of the `provider` entry of some provider options, checked to be an
    object (`where` names the field in the error)."""
    if not options:
        return {}
    mine = options.get(provider)
    if mine is None:
        return {}
    if not isinstance(mine, Mapping):
        raise InvalidArgument.field(where, "must be an object")
    return dict(mine)


def json_value(value: Any) -> Any:
    """`value` as plain JSON (tool results and error bodies may hold any Python object)."""
    return json.loads(json.dumps(value, default=str))


def int_or_none(value: Any) -> int | None:
    """An integer from a provider's JSON (booleans are not counts)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def retryable_status(status: int, should_retry: str | None = None) -> bool:
    """Whether an HTTP error is worth retrying: 408, 409, 429 and 5xx, unless the
    provider's `x-should-retry` header (given as `should_retry`) says otherwise."""
    answer = (should_retry or "").strip().lower()
    if answer in ("true", "false"):
        return answer == "true"
    return status in _RETRYABLE_STATUSES or status >= 500


def missing_credentials(provider: str, message: str, *variables: str) -> FailedPrecondition:
    """The error of a model created without its API key: it names the variable
    to set (the first, and all of them when several are read)."""
    metadata = {"variable": variables[0], "provider": provider}
    if len(variables) > 1:
        metadata["variables"] = ",".join(variables)
    return FailedPrecondition(message, "CREDENTIALS_MISSING", metadata)


class ModelIdentity:
    """The identity of a model: its provider (the class's PROVIDER) and model id."""

    PROVIDER: ClassVar[str]

    def __init__(self, model_id: str) -> None:
        self._model_id = model_id

    @property
    def provider(self) -> str:
        return self.PROVIDER

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def spec(self) -> str:
        return f"{self.PROVIDER}/{self._model_id}"


class ProviderModel(ModelIdentity):
    """A provider adapter's model: its identity and the endpoint it calls."""

    def __init__(self, model_id: str, base_url: str) -> None:
        super().__init__(model_id)
        self._base_url = base_url

    @property
    def base_url(self) -> str:
        return self._base_url


class OpenParts:
    """The text and the reasoning a stream is writing: a model writes one at a
    time, so a delta of one ends the other, and the first delta starts it."""

    def __init__(self) -> None:
        self.text_id: str | None = None
        self.reasoning_id: str | None = None

    def text(self, delta: str) -> list[ModelEvent]:
        events = self.end_reasoning()
        if self.text_id is None:
            self.text_id = new_id("txt_")
            events.append(chunks.TextStart(self.text_id))
        events.append(chunks.TextDelta(self.text_id, delta))
        return events

    def start_reasoning(self) -> list[ModelEvent]:
        events = self.end_text()
        if self.reasoning_id is None:
            self.reasoning_id = new_id("rs_")
            events.append(chunks.ReasoningStart(self.reasoning_id))
        return events

    def reasoning(self, delta: str) -> list[ModelEvent]:
        events = self.start_reasoning()
        assert self.reasoning_id is not None
        events.append(chunks.ReasoningDelta(self.reasoning_id, delta))
        return events

    def end_text(self, provider_metadata: JSONObject | None = None) -> list[ModelEvent]:
        if self.text_id is None:
            return []
        tid, self.text_id = self.text_id, None
        return [chunks.TextEnd(tid, provider_metadata=provider_metadata)]

    def end_reasoning(
        self, signature: str | None = None, provider_metadata: JSONObject | None = None
    ) -> list[ModelEvent]:
        if self.reasoning_id is None:
            return []
        rid, self.reasoning_id = self.reasoning_id, None
        return [chunks.ReasoningEnd(rid, signature=signature, provider_metadata=provider_metadata)]

    def end_both(self) -> list[ModelEvent]:
        return [*self.end_reasoning(), *self.end_text()]


def whole_tool_call(
    call_id: str, name: str, args: Any, provider_metadata: JSONObject | None = None
) -> list[ModelEvent]:
    """The events of a tool call that arrives whole: input start, one delta with
    all the arguments, input end, then the call."""
    return [
        chunks.ToolCallStart(call_id, name, provider_metadata=provider_metadata),
        chunks.ToolCallDelta(call_id, json.dumps(args, separators=(",", ":")), name),
        chunks.ToolCallEnd(call_id),
        chunks.ToolCall(ToolCallPart(call_id, name, args, provider_metadata=provider_metadata)),
    ]


class ConvertedErrors(Generic[T]):
    """An SDK stream's items, a failure to read the next one raised as
    `convert(exc)` (chained to it); what the caller does with an item is not
    caught (a class, not a generator: nothing is left to finalize when the
    caller stops early)."""

    def __init__(self, stream: AsyncIterable[T], convert: Callable[[Exception], Exception]) -> None:
        self._iterator: AsyncIterator[T] = stream.__aiter__()
        self._convert = convert

    def __aiter__(self) -> ConvertedErrors[T]:
        return self

    async def __anext__(self) -> T:
        try:
            return await self._iterator.__anext__()
        except StopAsyncIteration:
            raise
        except Exception as exc:
            raise self._convert(exc) from exc
