"""Signals to protobuf and back; SignalInput/MessageInput to validated signals."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google.protobuf.message import Message as PbMessage

from agentd.grpc import convert, validate
from agentd.grpc.validate import Violations
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, TextPart
from agentd.runtime.signals import Signal, create_message_signal, create_signal
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import signal_pb2 as spb

# ---------------------------------------------------------------- pieces


def attributes_to_pb(attributes: Iterable[tuple[str, Any]]) -> list[mpb.Attribute]:
    return [mpb.Attribute(name=name, value=convert.to_value(value)) for name, value in attributes]


def attributes_from_pb(attributes: Iterable[mpb.Attribute]) -> list[tuple[str, Any]]:
    """Ordered pairs; an unset value is null (dropped when rendered)."""
    return [(a.name, convert.from_value(a.value) if a.HasField("value") else None) for a in attributes]


def content_part_to_pb(part: TextPart | FilePart) -> mpb.ContentPart:
    if isinstance(part, TextPart):
        return mpb.ContentPart(
            text=mpb.TextPart(text=part.text, provider_options=convert.to_struct(part.provider_options))
        )
    return mpb.ContentPart(file=convert.file_to_pb(part))


def content_part_from_pb(pb: mpb.ContentPart) -> TextPart | FilePart:
    # A ContentPart is the text/file subset of Part: decode it as one.
    part = convert.part_from_pb(mpb.Part(text=pb.text) if pb.HasField("text") else mpb.Part(file=pb.file))
    assert isinstance(part, (TextPart, FilePart))
    return part


def _struct(pb: PbMessage, name: str) -> dict[str, Any] | None:
    return convert.from_struct(getattr(pb, name)) if pb.HasField(name) else None


# ---------------------------------------------------------------- Signal


def signal_to_pb(signal: Signal) -> mpb.Signal:
    pb = mpb.Signal(
        id=signal.id,
        type=signal.type,
        tag_name=signal.tag_name,
        attributes=attributes_to_pb(signal.attributes),
        metadata=convert.to_struct(signal.metadata),
        provider_options=convert.to_struct(signal.provider_options),
        transient=bool(signal.transient),
        create_time=convert.to_timestamp(signal.created_at),
        accept_time=convert.to_timestamp(signal.accepted_at),
        thread_id=signal.thread_id or "",
        resource_id=signal.resource_id or "",
    )
    if isinstance(signal.contents, str):
        pb.text = signal.contents
    else:
        pb.parts.extend(content_part_to_pb(p) for p in signal.contents)
    return pb


def signal_from_pb(pb: mpb.Signal) -> Signal:
    """The inverse of signal_to_pb (through create_signal, so it normalises the
    same way; numbers come back as floats, equal to the ints they were)."""
    return create_signal(
        pb.type,
        [content_part_from_pb(p) for p in pb.parts] if pb.parts else pb.text,
        tag_name=pb.tag_name or None,
        attributes=attributes_from_pb(pb.attributes),
        metadata=_struct(pb, "metadata"),
        provider_options=_struct(pb, "provider_options"),
        transient=True if pb.transient else None,
        id=pb.id or None,
        created_at=convert.from_timestamp(pb.create_time) if pb.HasField("create_time") else None,
        accepted_at=convert.from_timestamp(pb.accept_time) if pb.HasField("accept_time") else None,
        thread_id=pb.thread_id or None,
        resource_id=pb.resource_id or None,
    )


# ---------------------------------------------------------------- inputs


def signal_input_from_pb(pb: spb.SignalInput, path: str) -> Signal:
    """A validated signal, or one InvalidArgument naming every bad field under `path`."""
    v = Violations()
    contents = _contents(pb.text, pb.parts, path, v)
    signal = _create(
        v,
        path,
        lambda: create_signal(
            pb.type,
            contents,
            tag_name=pb.tag_name or None,
            attributes=attributes_from_pb(pb.attributes),
            metadata=_struct(pb, "metadata"),
            provider_options=_struct(pb, "provider_options"),
            # Presence matters: `transient: false` on a state signal is an error.
            transient=pb.transient if pb.HasField("transient") else None,
            id=pb.id or None,
        ),
    )
    v.check()
    assert signal is not None  # check() raised otherwise
    return signal


def message_input_from_pb(pb: spb.MessageInput, path: str) -> Signal:
    """A validated user-message signal, or one InvalidArgument under `path`."""
    v = Violations()
    contents = _contents(pb.text, pb.parts, path, v)
    signal = _create(
        v,
        path,
        lambda: create_message_signal(
            {
                "contents": contents,
                "attributes": attributes_from_pb(pb.attributes),
                "metadata": _struct(pb, "metadata"),
                "provider_options": _struct(pb, "provider_options"),
            },
            id=pb.id or None,
        ),
    )
    v.check()
    assert signal is not None
    return signal


def _contents(text: str, parts: Sequence[mpb.ContentPart], path: str, v: Violations) -> str | list[TextPart | FilePart]:
    if text and parts:
        v.add(f"{path}.parts", "set either text or parts, not both")
    out: list[TextPart | FilePart] = []
    for i, part in enumerate(parts):
        item = f"{path}.parts[{i}]"
        kind = part.WhichOneof("part")
        before = len(v.items)
        if kind is None:
            v.add(item, "set text or file")
        elif kind == "file":
            validate.file_part(part.file, f"{item}.file", v)
        if len(v.items) == before:
            out.append(content_part_from_pb(part))
    return out if parts else text


def _create(v: Violations, path: str, build: Callable[[], Signal]) -> Signal | None:
    """Run the runtime's own validation too, so one error lists every problem,
    its fields renamed under `path` (`type` → `signal.type`)."""
    try:
        return build()
    except InvalidArgument as err:
        reason = None if err.reason == "INVALID_REQUEST" else err.reason
        for item in err.violations:
            v.add(f"{path}.{item.field}", item.description, reason)
        return None
