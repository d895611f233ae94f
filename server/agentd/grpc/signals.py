"""Signals to protobuf and back; SignalInput and MessageInput to validated
runtime signals; attributes (ordered name/value pairs)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypedDict

from agentd.grpc.parts import check_contents, content_part_from_pb, content_part_to_pb
from agentd.grpc.values import from_timestamp, from_value, optional_struct, to_struct, to_timestamp, to_value
from agentd.grpc.violations import Violations
from agentd.runtime.messages import FilePart, TextPart
from agentd.runtime.signals import Attributes, Signal, create_message_signal, create_signal, normalize_attributes
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import signal_pb2 as spb


def attributes_to_pb(attributes: Iterable[tuple[str, Any]]) -> list[mpb.Attribute]:
    return [mpb.Attribute(name=name, value=to_value(value)) for name, value in attributes]


def attributes_from_pb(attributes: Iterable[mpb.Attribute]) -> list[tuple[str, Any]]:
    """Ordered pairs; an unset value is null (dropped when rendered)."""
    return [(a.name, from_value(a.value) if a.HasField("value") else None) for a in attributes]


def scalar_attributes(attributes: Iterable[mpb.Attribute], path: str, v: Violations) -> Attributes:
    """Delivery-path attributes: scalar values only, checked under `path`."""
    found = v.collect(lambda: normalize_attributes(attributes_from_pb(attributes), path=path, scalar_only=True))
    return () if found is None else found


def signal_to_pb(signal: Signal) -> mpb.Signal:
    pb = mpb.Signal(
        id=signal.id,
        type=signal.type,
        tag_name=signal.tag_name,
        attributes=attributes_to_pb(signal.attributes),
        metadata=to_struct(signal.metadata),
        provider_options=to_struct(signal.provider_options),
        transient=bool(signal.transient),
        create_time=to_timestamp(signal.created_at),
        accept_time=to_timestamp(signal.accepted_at),
        thread_id=signal.thread_id or "",
        resource_id=signal.resource_id or "",
    )
    if isinstance(signal.contents, str):
        pb.text = signal.contents
    else:
        pb.parts.extend(content_part_to_pb(p) for p in signal.contents)
    return pb


class _Described(TypedDict):
    """What a signal on the wire and a signal a caller sends both carry (create_signal's keywords)."""

    tag_name: str | None
    attributes: list[tuple[str, Any]]
    metadata: dict[str, Any] | None
    provider_options: dict[str, Any] | None
    id: str | None


def _described(pb: mpb.Signal | spb.SignalInput) -> _Described:
    return {
        "tag_name": pb.tag_name or None,
        "attributes": attributes_from_pb(pb.attributes),
        "metadata": optional_struct(pb, "metadata"),
        "provider_options": optional_struct(pb, "provider_options"),
        "id": pb.id or None,
    }


def signal_from_pb(pb: mpb.Signal) -> Signal:
    """The inverse of signal_to_pb (through create_signal, so it normalises the
    same way; numbers come back as floats, equal to the ints they were)."""
    return create_signal(
        pb.type,
        [content_part_from_pb(p) for p in pb.parts] if pb.parts else pb.text,
        transient=True if pb.transient else None,
        created_at=from_timestamp(pb.create_time) if pb.HasField("create_time") else None,
        accepted_at=from_timestamp(pb.accept_time) if pb.HasField("accept_time") else None,
        thread_id=pb.thread_id or None,
        resource_id=pb.resource_id or None,
        **_described(pb),
    )


# ---------------------------------------------------------------- inputs


def signal_input_from_pb(pb: spb.SignalInput, path: str) -> Signal:
    """A validated signal, or one InvalidArgument naming every bad field under `path`."""
    return _validated(
        pb,
        path,
        lambda contents: create_signal(
            pb.type,
            contents,
            # Presence matters: `transient: false` on a state signal is an error.
            transient=pb.transient if pb.HasField("transient") else None,
            **_described(pb),
        ),
    )


def message_input_from_pb(pb: spb.MessageInput, path: str) -> Signal:
    """A validated user-message signal, or one InvalidArgument under `path`."""
    return _validated(
        pb,
        path,
        lambda contents: create_message_signal(
            {
                "contents": contents,
                "attributes": attributes_from_pb(pb.attributes),
                "metadata": optional_struct(pb, "metadata"),
                "provider_options": optional_struct(pb, "provider_options"),
            },
            id=pb.id or None,
        ),
    )


def _validated(
    pb: spb.SignalInput | spb.MessageInput,
    path: str,
    build: Callable[[str | list[TextPart | FilePart]], Signal],
) -> Signal:
    """The transport's checks of the contents and the runtime's own of the rest,
    so one error lists every problem, its fields under `path` (`type` → `signal.type`)."""
    v = Violations()
    contents = check_contents(pb.text, pb.parts, path, v)
    signal = v.collect(lambda: build(contents), path)
    v.check()
    assert signal is not None  # check() raised otherwise
    return signal
