"""clone: a deep copy of the runtime's own values."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import UTC, datetime

from agentd.runtime.clone import clone
from agentd.runtime.messages import Message, SignalPart, TextPart
from agentd.runtime.signals import create_signal


class Colour(enum.StrEnum):
    RED = "red"


@dataclass(frozen=True)
class Frozen:
    items: tuple[list[int], ...]
    extra: dict[str, object] = field(default_factory=dict)


class Opaque:
    def __init__(self) -> None:
        self.inner = [1]


def test_a_clone_equals_its_original_and_shares_nothing_mutable() -> None:
    message = Message(
        role="user",
        parts=[TextPart("hi"), SignalPart(create_signal("reactive", "x"))],
        metadata={"a": [1, {"b": [2]}], "when": datetime(2026, 1, 1, tzinfo=UTC), "colour": Colour.RED},
    )
    copy = clone(message)
    assert copy == message and copy is not message
    assert copy.parts is not message.parts and copy.parts[0] is not message.parts[0]
    nested = message.metadata["a"]
    assert isinstance(nested, list) and copy.metadata["a"] is not nested
    assert copy.metadata["a"][1] is not nested[1]  # type: ignore[index]
    assert copy.metadata["colour"] is Colour.RED  # immutable leaves are shared
    assert clone(message) == copy  # again, from the class's cached fields


def test_frozen_dataclasses_tuples_and_unknown_objects_are_copied_deeply() -> None:
    frozen = Frozen(([1, 2],), {"o": Opaque()})
    copy = clone(frozen)
    assert copy.items == frozen.items and copy.items[0] is not frozen.items[0]
    opaque = copy.extra["o"]
    assert isinstance(opaque, Opaque) and opaque is not frozen.extra["o"] and opaque.inner == [1]


@dataclass(frozen=True)
class FrozenNamed:
    name: str
    tags: list[str] = field(default_factory=list)


@dataclass
class Unresolvable:
    name: str
    later: NotDefinedAnywhere | None = None  # type: ignore[name-defined]  # noqa: F821


def test_immutable_fields_are_shared_and_the_rest_copied_whatever_the_annotations() -> None:
    named = FrozenNamed("n", ["a"])
    copy = clone(named)
    assert copy == named and copy.tags is not named.tags
    # Annotations that cannot be resolved: every field is looked at, as before.
    odd = Unresolvable("x", [1])  # type: ignore[arg-type]
    odd_copy = clone(odd)
    assert odd_copy == odd and odd_copy.later is not odd.later
