"""JSON values (google.protobuf Value and Struct), Timestamps, Durations and
enum values, to runtime values and back; and the check every request passes before it is
handled: no number in any Value is NaN or infinite (protobuf can carry them,
JSON cannot), each one a field violation naming where it is."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar, cast

from google.protobuf import descriptor, duration_pb2, struct_pb2, timestamp_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper
from google.protobuf.message import Message

from agentd.grpc.violations import Violations
from agentd.runtime.errors import FieldViolation
from agentd.runtime.lazy import lazy

if TYPE_CHECKING:
    from google.protobuf import json_format
else:
    json_format = lazy("google.protobuf.json_format")  # the first Struct or Value read, not at start-up

E = TypeVar("E", bound=int)
N = TypeVar("N", bound=str)


def enum_values(enum: type[E], prefix: str, names: Iterable[N]) -> dict[N, E]:
    """The proto enum's value of each runtime name: `content-filter` is
    PREFIX_CONTENT_FILTER (a name the enum lacks raises ValueError at import)."""
    wrapper = cast(EnumTypeWrapper, enum)  # the stubs declare an int class; it is the enum's wrapper
    return {name: cast(E, wrapper.Value(prefix + name.upper().replace("-", "_"))) for name in names}


def enum_names(values: Iterable[E], names: Mapping[E, N], field: str, what: str, v: Violations) -> list[N]:
    """The runtime names of a repeated enum field's `values`, a violation
    (`field[i]`: unknown `what`) for each value `names` lacks."""
    found = []
    for i, value in enumerate(values):
        if value not in names:
            v.add(f"{field}[{i}]", f"unknown {what}")
        else:
            found.append(names[value])
    return found


def to_value(obj: Any) -> struct_pb2.Value:
    value = struct_pb2.Value()
    if obj is None:
        value.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):
        value.bool_value = obj
    elif isinstance(obj, (int, float)):
        value.number_value = obj
    elif isinstance(obj, str):
        value.string_value = obj
    elif isinstance(obj, dict):
        value.struct_value.SetInParent()  # `{}` is a value too: update() alone leaves the field unset
        value.struct_value.update(obj)
    elif isinstance(obj, (list, tuple)):
        value.list_value.SetInParent()
        value.list_value.extend(obj)
    else:
        value.string_value = str(obj)
    return value


def from_value(value: struct_pb2.Value) -> Any:
    return json_format.MessageToDict(value)


def to_struct(obj: dict[str, Any] | None) -> struct_pb2.Struct | None:
    if not obj:
        return None
    struct = struct_pb2.Struct()
    struct.update(obj)
    return struct


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(struct)


def optional_struct(message: Message, name: str) -> dict[str, Any] | None:
    """The Struct field `name` of `message` as a dict, None when it is unset."""
    return from_struct(getattr(message, name)) if message.HasField(name) else None


def optional_value(message: Message, name: str) -> Any:
    """The Value field `name` of `message`, None when it is unset."""
    return from_value(getattr(message, name)) if message.HasField(name) else None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_timestamp(when: datetime | None) -> timestamp_pb2.Timestamp | None:
    """What Timestamp.FromDatetime gives (a naive `when` is local time), in
    plain arithmetic: FromDatetime was a tenth of a reply's translation."""
    if when is None:
        return None
    return timestamp_pb2.Timestamp(**timestamp_fields(when))


def timestamp_fields(when: datetime) -> dict[str, int]:
    """`to_timestamp`'s fields, for a Timestamp field set where it is built
    (a message named as a field's value is copied in; a dict fills it in place)."""
    since = (when if when.tzinfo is not None else when.astimezone(UTC)) - _EPOCH
    return {"seconds": since.days * 86400 + since.seconds, "nanos": since.microseconds * 1000}


def fill_timestamp(target: timestamp_pb2.Timestamp, when: datetime) -> None:
    """`to_timestamp(when)` written into a Timestamp field where it is (a
    message set as a field's value would be copied in)."""
    since = (when if when.tzinfo is not None else when.astimezone(UTC)) - _EPOCH
    target.seconds = since.days * 86400 + since.seconds
    target.nanos = since.microseconds * 1000


def from_timestamp(ts: timestamp_pb2.Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=UTC)


# google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799


def timestamp(pb: timestamp_pb2.Timestamp, field: str, v: Violations) -> datetime | None:
    """A valid Timestamp as a datetime, or a field violation."""
    if not _MIN_SECONDS <= pb.seconds <= _MAX_SECONDS or not 0 <= pb.nanos < 1_000_000_000:
        v.add(field, "is not a valid timestamp (years 1 to 9999, nanos in [0, 1e9))")
        return None
    return from_timestamp(pb)


def duration_seconds(pb: duration_pb2.Duration, field: str, v: Violations) -> float | None:
    """A valid Duration in seconds, or a field violation."""
    ok = abs(pb.seconds) <= 315_576_000_000 and abs(pb.nanos) < 1_000_000_000
    if not ok or (pb.seconds > 0 > pb.nanos) or (pb.seconds < 0 < pb.nanos):
        v.add(field, "is not a valid duration")
        return None
    return float(pb.seconds + pb.nanos / 1e9)


# ---------------------------------------------------------------- finite numbers only

_NOT_FINITE = "must be a finite number (NaN and Infinity are not JSON values)"


def may_hold_non_finite(data: bytes) -> bool:
    """Whether the encoded message `data` may hold a NaN or infinite double:
    such a double has all eleven exponent bits set, so its last byte (the
    most significant; doubles are little-endian on the wire) is 0x7f or 0xff.
    Bytes holding neither, as almost every request's do, hold none. (An int
    looked for is one memchr; a bytes needle costs five times as much.)"""
    return 0x7F in data or 0xFF in data


def non_finite(message: Message, path: str = "") -> list[FieldViolation]:
    """A violation for each NaN or infinite number in any Value inside `message`
    (Struct keys as `.key`, list items as `[i]`)."""
    out: list[FieldViolation] = []
    _walk(message, path, out)
    return out


_VALUE_TYPES = frozenset({"google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.ListValue"})
#: Whether a message type can hold a Value, a Struct or a ListValue, in any
#: field however deep: fields that cannot are not walked.
_HOLDS: dict[str, bool] = {}


def holds_values(message_type: descriptor.Descriptor) -> bool:
    """Whether a message of `message_type` can hold a Value (Struct, ListValue) anywhere within."""
    name = message_type.full_name
    known = _HOLDS.get(name)
    if known is None:
        seen: set[str] = set()
        todo = [message_type]
        while todo:  # every type reachable from this one (types may recur: Value holds Struct holds Value)
            d = todo.pop()
            if d.full_name not in seen:
                seen.add(d.full_name)
                todo.extend(f.message_type for f in d.fields if f.message_type is not None)
        known = _HOLDS[name] = not seen.isdisjoint(_VALUE_TYPES)
    return known


def _walk(message: Message, path: str, out: list[FieldViolation]) -> None:
    if isinstance(message, struct_pb2.Value):
        _value(message, path, out)
        return
    if isinstance(message, struct_pb2.Struct):
        for key, item in message.fields.items():
            _value(item, f"{path}.{key}" if path else key, out)
        return
    if isinstance(message, struct_pb2.ListValue):
        for i, item in enumerate(message.values):
            _value(item, f"{path}[{i}]", out)
        return
    for field, value in message.ListFields():
        if field.message_type is None or not holds_values(field.message_type):
            continue
        name = f"{path}.{field.name}" if path else field.name
        if field.message_type.GetOptions().map_entry:
            for key, item in value.items():
                if isinstance(item, Message):
                    _walk(item, f"{name}.{key}", out)
        elif field.is_repeated:
            for i, item in enumerate(value):
                _walk(item, f"{name}[{i}]", out)
        else:
            _walk(value, name, out)


def _value(value: struct_pb2.Value, path: str, out: list[FieldViolation]) -> None:
    kind = value.WhichOneof("kind")
    if kind == "number_value" and not math.isfinite(value.number_value):
        out.append(FieldViolation(path, _NOT_FINITE))
    elif kind == "struct_value":
        _walk(value.struct_value, path, out)
    elif kind == "list_value":
        _walk(value.list_value, path, out)
