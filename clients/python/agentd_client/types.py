"""Result objects and input helpers. Messages and chunks stay the contract's
protobuf types (`agentd_proto.v1`); these wrap the answers worth a shape."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from agentd_proto.v1 import (
    agent_service_pb2,
    chunk_pb2,
    message_pb2,
    signal_pb2,
    usage_pb2,
)

from ._values import from_value, to_struct, to_value

T = TypeVar("T")

_ROLES = {
    "user": message_pb2.ROLE_USER,
    "assistant": message_pb2.ROLE_ASSISTANT,
    "system": message_pb2.ROLE_SYSTEM,
    "signal": message_pb2.ROLE_SIGNAL,
}
#: The payloads that end a run's stream.
TERMINAL_KINDS = frozenset({"finish", "error", "abort"})


# ------------------------------------------------------------------ inputs


def message(role: str, text: str = "", *, metadata: Mapping[str, Any] | None = None) -> message_pb2.Message:
    """A message with one text part: `message("user", "hi")`."""
    if role not in _ROLES:
        raise ValueError(f"role is one of {', '.join(_ROLES)}, not {role!r}")
    pb = message_pb2.Message(role=_ROLES[role], parts=[message_pb2.Part(text=message_pb2.TextPart(text=text))])
    if metadata is not None:
        pb.metadata.CopyFrom(to_struct(metadata))
    return pb


def user(text: str) -> message_pb2.Message:
    return message("user", text)


def assistant(text: str) -> message_pb2.Message:
    return message("assistant", text)


def system(text: str) -> message_pb2.Message:
    return message("system", text)


MessagesInput = str | message_pb2.Message | Sequence[message_pb2.Message | Mapping[str, Any]]


def run_input(value: MessagesInput) -> tuple[str, list[message_pb2.Message]]:
    """(text, messages) for a run request: a string is the `text` shortcut;
    messages are `Message`s or `{"role", "content" | "text", "metadata"}` dicts."""
    if isinstance(value, str):
        return value, []
    if isinstance(value, message_pb2.Message):
        return "", [value]
    out = []
    for item in value:
        if isinstance(item, message_pb2.Message):
            out.append(item)
        elif isinstance(item, Mapping):
            text = item.get("content", item.get("text", ""))
            if not isinstance(text, str):
                raise TypeError("a message dict's content is a string; build a Message for other parts")
            out.append(message(str(item.get("role", "user")), text, metadata=item.get("metadata")))
        else:
            raise TypeError(f"a message is a Message or a dict, not {item!r}")
    return "", out


Attributes = Mapping[str, Any] | Iterable[tuple[str, Any]] | None


def attributes(value: Attributes) -> list[message_pb2.Attribute]:
    """Ordered attributes from a dict (insertion order) or (name, value) pairs."""
    if value is None:
        return []
    pairs = value.items() if isinstance(value, Mapping) else value
    return [message_pb2.Attribute(name=str(name), value=to_value(v)) for name, v in pairs]


def content_parts(parts: Iterable[Any] | None) -> list[message_pb2.ContentPart]:
    """Content parts from strings (text), TextPart/FilePart messages or ContentParts."""
    out = []
    for part in parts or ():
        if isinstance(part, message_pb2.ContentPart):
            out.append(part)
        elif isinstance(part, str):
            out.append(message_pb2.ContentPart(text=message_pb2.TextPart(text=part)))
        elif isinstance(part, message_pb2.TextPart):
            out.append(message_pb2.ContentPart(text=part))
        elif isinstance(part, message_pb2.FilePart):
            out.append(message_pb2.ContentPart(file=part))
        else:
            raise TypeError(f"a content part is a str, TextPart, FilePart or ContentPart, not {part!r}")
    return out


# ----------------------------------------------------------------- chunks


def chunk_kind(chunk: chunk_pb2.Chunk) -> str:
    """The payload's oneof name: "start", "text_delta", "finish", ..."""
    return chunk.WhichOneof("payload") or ""


def is_terminal(chunk: chunk_pb2.Chunk) -> bool:
    """True for the last chunk of a run: finish, error or abort."""
    return chunk_kind(chunk) in TERMINAL_KINDS


def joined_text(chunks: Iterable[chunk_pb2.Chunk]) -> str:
    """The text deltas of `chunks`, joined."""
    return "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))


def finish_reason_name(value: int) -> str:
    """`FINISH_REASON_STOP` → "STOP"."""
    return usage_pb2.FinishReason.Name(value).removeprefix("FINISH_REASON_")


def first_text(msg: message_pb2.Message) -> str:
    """The first text part of a message ("" when it has none); for a signal
    row, the signal's text."""
    for part in msg.parts:
        kind = part.WhichOneof("part")
        if kind == "text":
            return part.text.text
        if kind == "signal":
            sig = part.signal.signal
            if sig.text:
                return sig.text
            for cp in sig.parts:
                if cp.HasField("text"):
                    return cp.text.text
    return ""


# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class GenerateResult:
    """The answer of `generate`; `response` is the full `GenerateResponse`."""

    response: agent_service_pb2.GenerateResponse

    @property
    def text(self) -> str:
        return self.response.text

    @property
    def run_id(self) -> str:
        return self.response.run_id

    @property
    def finish_reason(self) -> str:
        """E.g. "STOP", "TOOL_CALLS", "OTHER" (a tripwire ended the run)."""
        return finish_reason_name(self.response.finish_reason)

    @property
    def usage(self) -> usage_pb2.Usage:
        """Usage of the last step."""
        return self.response.usage

    @property
    def total_usage(self) -> usage_pb2.Usage:
        return self.response.total_usage

    @property
    def object(self) -> Any:
        """The structured-output object as Python data (None when not requested)."""
        return from_value(self.response.object) if self.response.HasField("object") else None

    @property
    def tripwire(self) -> chunk_pb2.Tripwire | None:
        return self.response.tripwire if self.response.HasField("tripwire") else None

    @property
    def reasoning_text(self) -> str:
        return self.response.reasoning_text

    @property
    def model(self) -> str:
        return self.response.model

    @property
    def thread_id(self) -> str:
        return self.response.thread_id

    @property
    def resource_id(self) -> str:
        return self.response.resource_id

    @property
    def steps(self) -> Sequence[agent_service_pb2.StepResult]:
        return self.response.steps

    @property
    def tool_calls(self) -> Sequence[message_pb2.ToolCall]:
        return self.response.tool_calls

    @property
    def tool_results(self) -> Sequence[message_pb2.ToolResult]:
        return self.response.tool_results

    @property
    def response_messages(self) -> Sequence[message_pb2.Message]:
        return self.response.response_messages

    @property
    def warnings(self) -> Sequence[str]:
        return self.response.warnings


@dataclass(frozen=True)
class Routing:
    """A routing decision: what the server did with a message or signal.

    `action` is "wake" (a run started: `run_id`), "deliver" (joined the active
    or queued run `run_id`), "persist", "discard" or "skipped_unchanged" (a
    state signal equal to the lane's state). `signal` is the created signal
    (None when skipped); `version` the state lane's version (state signals).
    """

    action: str
    run_id: str
    signal: message_pb2.Signal | None
    decision: signal_pb2.RoutingDecision
    version: int | None = None

    @classmethod
    def of(
        cls, signal: message_pb2.Signal | None, decision: signal_pb2.RoutingDecision, version: int | None = None
    ) -> Routing:
        action = decision.WhichOneof("action") or ""
        run_id = ""
        if action == "wake":
            run_id = decision.wake.run_id
        elif action == "deliver":
            run_id = decision.deliver.run_id
        return cls(action, run_id, signal, decision, version)


@dataclass(frozen=True)
class NotificationResult:
    """The answer of `send_notification`: the inbox record, the delivery
    policy's decision and, when a signal was emitted now, its routing."""

    notification: signal_pb2.Notification
    decision: signal_pb2.DeliveryDecision
    routing: Routing | None

    @property
    def action(self) -> str:
        """The delivery action, e.g. "DELIVER", "DEFER", "SUMMARIZE"."""
        return signal_pb2.DeliveryAction.Name(self.decision.action).removeprefix("DELIVERY_ACTION_")


@dataclass(frozen=True)
class CacheEntry:
    found: bool
    value: Any = None


@dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    writes: int
    errors: int
    size: int
    backend: str


@dataclass
class Pager(Generic[T]):
    """An AIP-158 list: `async for item in pager` walks every page lazily;
    `pager.pages()` yields the pages (lists); `await pager.all()` collects."""

    fetch: Callable[[str], Awaitable[tuple[list[T], str]]]

    async def pages(self) -> AsyncIterator[list[T]]:
        token = ""
        while True:
            items, token = await self.fetch(token)
            yield items
            if not token:
                return

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page:
                yield item

    async def all(self) -> list[T]:
        return [item async for item in self]
