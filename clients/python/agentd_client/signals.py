"""Signal, message and notification inputs from keyword arguments."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agentd_proto.v1 import options_pb2, signal_pb2

from ._values import to_struct, to_value
from .options import execution_options
from .types import Attributes, attributes, content_parts

IfActiveArg = str | signal_pb2.IfActive | None
IfIdleArg = str | signal_pb2.IfIdle | None

_ACTIVE = {
    "deliver": signal_pb2.ACTIVE_BEHAVIOR_DELIVER,
    "persist": signal_pb2.ACTIVE_BEHAVIOR_PERSIST,
    "discard": signal_pb2.ACTIVE_BEHAVIOR_DISCARD,
}
_IDLE = {
    "wake": signal_pb2.IDLE_BEHAVIOR_WAKE,
    "persist": signal_pb2.IDLE_BEHAVIOR_PERSIST,
    "discard": signal_pb2.IDLE_BEHAVIOR_DISCARD,
}
_STATE_MODES = {"snapshot": signal_pb2.STATE_MODE_SNAPSHOT, "delta": signal_pb2.STATE_MODE_DELTA}
_PRIORITIES = {
    "low": signal_pb2.NOTIFICATION_PRIORITY_LOW,
    "medium": signal_pb2.NOTIFICATION_PRIORITY_MEDIUM,
    "high": signal_pb2.NOTIFICATION_PRIORITY_HIGH,
    "urgent": signal_pb2.NOTIFICATION_PRIORITY_URGENT,
}
_STATUSES = {
    "pending": signal_pb2.NOTIFICATION_STATUS_PENDING,
    "delivered": signal_pb2.NOTIFICATION_STATUS_DELIVERED,
    "seen": signal_pb2.NOTIFICATION_STATUS_SEEN,
    "dismissed": signal_pb2.NOTIFICATION_STATUS_DISMISSED,
    "archived": signal_pb2.NOTIFICATION_STATUS_ARCHIVED,
    "discarded": signal_pb2.NOTIFICATION_STATUS_DISCARDED,
    "failed": signal_pb2.NOTIFICATION_STATUS_FAILED,
}


def _enum(value: str | int, names: Mapping[str, int], what: str) -> int:
    if isinstance(value, int):
        return value
    try:
        return names[value.lower()]
    except KeyError:
        raise ValueError(f"{what} is one of {', '.join(names)}, not {value!r}") from None


def priority(value: str | int) -> int:
    return _enum(value, _PRIORITIES, "priority")


def notification_status(value: str | int) -> int:
    return _enum(value, _STATUSES, "status")


def stream_options_pb(value: Any) -> options_pb2.ExecutionOptions | None:
    """Run options from an `ExecutionOptions` or a dict of option keywords."""
    if value is None or isinstance(value, options_pb2.ExecutionOptions):
        return value
    if isinstance(value, Mapping):
        return execution_options(**value)
    raise TypeError("stream_options is an ExecutionOptions or a dict of option keywords")


def if_active_pb(value: IfActiveArg, attrs: Attributes = None) -> signal_pb2.IfActive | None:
    """`"deliver" | "persist" | "discard"` (or an IfActive) plus path attributes."""
    if isinstance(value, signal_pb2.IfActive):
        return value
    if value is None and attrs is None:
        return None
    out = signal_pb2.IfActive(attributes=attributes(attrs))
    if value is not None:
        out.behavior = _enum(value, _ACTIVE, "if_active")  # type: ignore[assignment]
    return out


def if_idle_pb(value: IfIdleArg, attrs: Attributes = None, options: Any = None) -> signal_pb2.IfIdle | None:
    """`"wake" | "persist" | "discard"` (or an IfIdle) plus path attributes and
    the options of the run a wake starts."""
    if isinstance(value, signal_pb2.IfIdle):
        out = signal_pb2.IfIdle()
        out.CopyFrom(value)
        run_options = stream_options_pb(options)
        if run_options is not None:
            out.stream_options.CopyFrom(run_options)
        return out
    if value is None and attrs is None and options is None:
        return None
    out = signal_pb2.IfIdle(attributes=attributes(attrs))
    if value is not None:
        out.behavior = _enum(value, _IDLE, "if_idle")  # type: ignore[assignment]
    run_options = stream_options_pb(options)
    if run_options is not None:
        out.stream_options.CopyFrom(run_options)
    return out


def message_input(
    text: str,
    parts: Iterable[Any] | None,
    message_id: str,
    attrs: Attributes,
    metadata: Mapping[str, Any] | None,
    provider_options: Mapping[str, Any] | None,
) -> signal_pb2.MessageInput:
    pb = signal_pb2.MessageInput(id=message_id, text=text, parts=content_parts(parts), attributes=attributes(attrs))
    if metadata is not None:
        pb.metadata.CopyFrom(to_struct(metadata))
    if provider_options is not None:
        pb.provider_options.CopyFrom(to_struct(provider_options))
    return pb


def signal_input(
    type: str,
    text: str,
    parts: Iterable[Any] | None,
    signal_id: str,
    tag_name: str,
    attrs: Attributes,
    metadata: Mapping[str, Any] | None,
    provider_options: Mapping[str, Any] | None,
    transient: bool | None,
) -> signal_pb2.SignalInput:
    pb = signal_pb2.SignalInput(
        id=signal_id,
        type=type,
        tag_name=tag_name,
        text=text,
        parts=content_parts(parts),
        attributes=attributes(attrs),
    )
    if metadata is not None:
        pb.metadata.CopyFrom(to_struct(metadata))
    if provider_options is not None:
        pb.provider_options.CopyFrom(to_struct(provider_options))
    if transient is not None:
        pb.transient = transient
    return pb


def state_signal_input(
    lane: str,
    text: str = "",
    *,
    value: Any = None,
    delta: Any = None,
    mode: str | int = "snapshot",
    cache_key: str = "",
    parts: Iterable[Any] | None = None,
    signal_id: str = "",
    tag_name: str = "",
    attributes: Attributes = None,
    metadata: Mapping[str, Any] | None = None,
    provider_options: Mapping[str, Any] | None = None,
) -> signal_pb2.StateSignalInput:
    from .types import attributes as attrs_of

    pb = signal_pb2.StateSignalInput(
        signal_id=signal_id,
        id=lane,
        cache_key=cache_key,
        mode=_enum(mode, _STATE_MODES, "mode"),  # type: ignore[arg-type]
        text=text,
        parts=content_parts(parts),
        attributes=attrs_of(attributes),
        tag_name=tag_name,
    )
    if value is not None:
        pb.value.CopyFrom(to_value(value))
    if delta is not None:
        pb.delta.CopyFrom(to_value(delta))
    if metadata is not None:
        pb.metadata.CopyFrom(to_struct(metadata))
    if provider_options is not None:
        pb.provider_options.CopyFrom(to_struct(provider_options))
    return pb


def notification_input(
    source: str,
    kind: str,
    summary: str,
    *,
    priority_: str | int | None = None,
    payload: Any = None,
    source_id: str = "",
    dedupe_key: str = "",
    coalesce_key: str = "",
    attributes: Attributes = None,
    metadata: Mapping[str, Any] | None = None,
) -> signal_pb2.NotificationInput:
    from .types import attributes as attrs_of

    pb = signal_pb2.NotificationInput(
        source=source,
        kind=kind,
        summary=summary,
        source_id=source_id,
        dedupe_key=dedupe_key,
        coalesce_key=coalesce_key,
        attributes=attrs_of(attributes),
    )
    if priority_ is not None:
        pb.priority = priority(priority_)  # type: ignore[assignment]
    if payload is not None:
        pb.payload.CopyFrom(to_value(payload))
    if metadata is not None:
        pb.metadata.CopyFrom(to_struct(metadata))
    return pb
