"""JSON-shaped values: Python objects to and from `google.protobuf.Value`/`Struct`.

Struct numbers are doubles: a whole-number double comes back as an int.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import struct_pb2


def to_value(obj: Any) -> struct_pb2.Value:
    if isinstance(obj, struct_pb2.Value):
        return obj
    value = struct_pb2.Value()
    if obj is None:
        value.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):
        value.bool_value = obj
    elif isinstance(obj, int | float):
        value.number_value = float(obj)
    elif isinstance(obj, str):
        value.string_value = obj
    elif isinstance(obj, Mapping):
        value.struct_value.CopyFrom(to_struct(obj))
    elif isinstance(obj, Sequence) and not isinstance(obj, bytes | bytearray):
        value.list_value.values.extend(to_value(item) for item in obj)
    else:
        raise TypeError(f"not a JSON value: {obj!r} ({type(obj).__name__})")
    return value


def to_struct(obj: Mapping[str, Any] | struct_pb2.Struct) -> struct_pb2.Struct:
    if isinstance(obj, struct_pb2.Struct):
        return obj
    struct = struct_pb2.Struct()
    for key, item in obj.items():
        if not isinstance(key, str):
            raise TypeError(f"JSON object keys are strings, not {key!r}")
        struct.fields[key].CopyFrom(to_value(item))
    return struct


def from_value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "bool_value":
        return value.bool_value
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() and abs(number) < 2**53 else number
    if kind == "string_value":
        return value.string_value
    if kind == "struct_value":
        return from_struct(value.struct_value)
    return [from_value(item) for item in value.list_value.values]


def from_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    return {key: from_value(item) for key, item in struct.fields.items()}
