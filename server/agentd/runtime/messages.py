"""Messages and their parts: run input, stored history and response messages.

A `Signal` lives here too: a signal row carries it as its one part, so the
part, the chunk that echoes it and the store all hold the type itself. How
signals are created, rendered and stored is agentd.runtime.signals.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import chain
from typing import Any, Literal, TypeAlias

Role = Literal["user", "assistant", "system", "signal"]
JSON: TypeAlias = Any


#: A version-4 UUID's fixed bits, byte by byte: byte 6's high nibble is the
#: version (4), byte 8's top two bits the variant (10), as uuid.uuid4 sets them.
_VERSION_BYTE = bytes((b & 0x0F) | 0x40 for b in range(256))
_VARIANT_BYTE = bytes((b & 0x3F) | 0x80 for b in range(256))
#: Ids drawn from the OS's randomness at a time: one getrandom call, one
#: translate per fixed byte, one hex() and one split() for all of them.
_POOL_IDS = 256
#: hex(sep="-", 2) puts a "-" after every 4 digits (40 characters an id,
#: counting the one that follows it): the one after an id becomes the space
#: split() cuts at, and those a UUID's 8-4-4-4-12 has not are deleted, the
#: last first (each `del` leaves blocks one shorter).
_NOT_HYPHENS = ((34, 40), (29, 39), (4, 38))


class _RandomPool:
    """An endless supply of random version-4 UUIDs, as 32 hex digits or
    hyphenated: `next()` is a C call (chain over batches formatted all at
    once), so a default factory that is one costs no Python frame."""

    __slots__ = ("batch", "hyphenated", "next")

    def __init__(self, *, hyphenated: bool) -> None:
        self.hyphenated = hyphenated
        self.batch: list[str] = []
        self.next = chain.from_iterable(iter(self._fresh, None)).__next__

    def _fresh(self) -> list[str]:
        pool = bytearray(os.urandom(16 * _POOL_IDS))  # 128 random bits per id, from os.urandom like uuid.uuid4's
        pool[6::16] = pool[6::16].translate(_VERSION_BYTE)
        pool[8::16] = pool[8::16].translate(_VARIANT_BYTE)
        if self.hyphenated:
            text = bytearray(pool.hex("-", 2) + "-", "ascii")
            text[39::40] = b" " * _POOL_IDS
            for start, step in _NOT_HYPHENS:
                del text[start::step]
            self.batch = text.decode("ascii").split()
        else:
            self.batch = pool.hex(" ", 16).split()
        return self.batch

    def forget(self) -> None:
        """Ends the batch being drawn from (its iterator stops at its new
        length): the next id comes from a fresh one."""
        self.batch.clear()


_digits = _RandomPool(hyphenated=False)
_uuids = _RandomPool(hyphenated=True)
for _pool in (_digits, _uuids):
    os.register_at_fork(after_in_child=_pool.forget)  # a forked child never repeats its parent's ids

#: `new_id()`, called from C (a message's default id).
next_uuid = _uuids.next


def new_id(prefix: str = "") -> str:
    """A random version-4 UUID: 32 hex digits after `prefix`, or hyphenated without one."""
    return prefix + _digits.next() if prefix else _uuids.next()


#: Now, timezone-aware (a partial: called from C, without a Python frame of its own).
utcnow = partial(datetime.now, UTC)


def aware(when: datetime) -> datetime:
    """Timezone-aware (a naive time is taken as UTC)."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when


def as_of(now: datetime | None) -> datetime:
    """A store method's `now`: the given time made aware, or the current time."""
    return aware(now) if now is not None else utcnow()


@dataclass(slots=True)
class TextPart:
    """Text in a message."""

    text: str
    provider_options: dict[str, JSON] | None = None
    type: Literal["text"] = "text"


@dataclass(slots=True)
class FilePart:
    """A file inline (`data`) or by URL (`url`): exactly one is set."""

    media_type: str
    data: bytes | None = None
    url: str | None = None
    filename: str | None = None
    provider_options: dict[str, JSON] | None = None
    type: Literal["file"] = "file"


@dataclass(slots=True)
class ReasoningPart:
    """The model's reasoning, with the provider's signature if any."""

    text: str
    signature: str | None = None
    redacted_data: bytes | None = None
    provider_options: dict[str, JSON] | None = None
    type: Literal["reasoning"] = "reasoning"


@dataclass(slots=True)
class ToolCallPart:
    """A tool call the model made."""

    tool_call_id: str
    tool_name: str
    args: JSON = None
    provider_executed: bool = False
    provider_metadata: dict[str, JSON] | None = None
    client_tool: bool = False
    #: What callers are shown instead ({"args": ...}; see tool_payloads).
    display: dict[str, JSON] | None = None
    type: Literal["tool-call"] = "tool-call"


@dataclass(slots=True)
class ToolResultPart:
    """What a tool call returned (`is_error`: it failed)."""

    tool_call_id: str
    tool_name: str
    result: JSON = None
    is_error: bool = False
    args: JSON = None
    provider_executed: bool = False
    provider_metadata: dict[str, JSON] | None = None
    #: What callers are shown instead ({"args": ..., "result": ...}; see tool_payloads).
    display: dict[str, JSON] | None = None
    type: Literal["tool-result"] = "tool-result"


@dataclass(slots=True)
class DataPart:
    """A custom part; `type` starts with "data-"."""

    type: str
    data: JSON = None
    id: str | None = None


SignalType = Literal["user", "state", "reactive", "notification"]
ContentPart: TypeAlias = TextPart | FilePart
Contents: TypeAlias = str | tuple[ContentPart, ...]
#: Ordered (name, value) pairs: the model sees attributes in this order.
Attributes: TypeAlias = tuple[tuple[str, JSON], ...]


@dataclass(frozen=True, slots=True)
class Signal:
    """Context pushed into a thread (build one with signals.create_signal)."""

    id: str
    type: SignalType
    tag_name: str
    #: A string, or text/file parts. A lone text part without provider options
    #: is always held as its string, so every stored form reads back equal.
    contents: Contents
    attributes: Attributes = ()
    metadata: dict[str, JSON] | None = None
    provider_options: dict[str, JSON] | None = None
    #: True or None: `False` is only meaningful on input (it is an error on a
    #: state signal), and every stored form keeps only `true`.
    transient: bool | None = None
    created_at: datetime = field(default_factory=utcnow)
    accepted_at: datetime | None = None
    thread_id: str | None = None
    resource_id: str | None = None

    @property
    def text(self) -> str:
        if isinstance(self.contents, str):
            return self.contents
        return "\n".join(p.text for p in self.contents if isinstance(p, TextPart))


@dataclass(slots=True)
class SignalPart:
    """A signal as a part of the conversation."""

    signal: Signal
    type: Literal["signal"] = "signal"


Part = TextPart | FilePart | ReasoningPart | ToolCallPart | ToolResultPart | DataPart | SignalPart


@dataclass(slots=True)
class Message:
    """One message of a conversation: its role and its parts."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    id: str = field(default_factory=next_uuid)
    metadata: dict[str, JSON] = field(default_factory=dict)
    provider_options: dict[str, JSON] | None = None
    thread_id: str | None = None
    resource_id: str | None = None
    created_at: datetime = field(default_factory=utcnow)

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        parts = self.parts
        if len(parts) == 1:  # most messages: no generator and no join
            part = parts[0]
            return part.text if isinstance(part, TextPart) else ""
        return "".join([p.text for p in parts if isinstance(p, TextPart)])

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextPart(text)])

    @classmethod
    def system(cls, text: str, provider_options: dict[str, JSON] | None = None) -> Message:
        return cls(role="system", parts=[TextPart(text)], provider_options=provider_options)
