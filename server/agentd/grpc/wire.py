"""Where a request's bytes stop decoding: the protobuf wire format walked
field by field against the request's descriptor, so an undecodable request
names the field at fault (`messages[1].parts[0].text: not valid UTF-8`)."""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor as d

__all__ = ["locate_malformed"]

_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = 0, 1, 2, 3, 4, 5
#: The wire types each field type may arrive in (repeated scalars may also be packed: LEN).
_SCALAR_WIRE = {
    d.FieldDescriptor.TYPE_DOUBLE: _I64,
    d.FieldDescriptor.TYPE_FIXED64: _I64,
    d.FieldDescriptor.TYPE_SFIXED64: _I64,
    d.FieldDescriptor.TYPE_FLOAT: _I32,
    d.FieldDescriptor.TYPE_FIXED32: _I32,
    d.FieldDescriptor.TYPE_SFIXED32: _I32,
}
_LENGTH_TYPES = {d.FieldDescriptor.TYPE_STRING, d.FieldDescriptor.TYPE_BYTES, d.FieldDescriptor.TYPE_MESSAGE}


class _Malformed(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def _varint(data: bytes, at: int, path: str) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise _Malformed(path, "ends inside a varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift >= 70:
            raise _Malformed(path, "has a varint longer than 10 bytes")


def _walk(desc: d.Descriptor, data: bytes, prefix: str) -> None:
    seen: dict[int, int] = {}
    at = 0
    while at < len(data):
        tag, at = _varint(data, at, prefix or "(request)")
        number, wire = tag >> 3, tag & 7
        field = desc.fields_by_number.get(number)
        name = field.name if field is not None else f"#{number}"
        index = seen.get(number, 0)
        seen[number] = index + 1
        path = f"{prefix}.{name}" if prefix else name
        if field is not None and field.is_repeated:
            path = f"{path}[{index}]"
        if number == 0:
            raise _Malformed(path, "has field number 0")
        if wire == _VARINT:
            _, at = _varint(data, at, path)
        elif wire in (_I64, _I32):
            at += 8 if wire == _I64 else 4
            if at > len(data):
                raise _Malformed(path, "ends inside a fixed-width value")
        elif wire == _LEN:
            length, at = _varint(data, at, path)
            if at + length > len(data):
                raise _Malformed(path, f"claims {length} bytes, more than the request holds")
            body, at = data[at : at + length], at + length
            if field is not None:
                _check_length_delimited(field, body, path)
        else:
            raise _Malformed(path, f"has wire type {wire}, which proto3 does not use")
        if field is not None and not _wire_fits(field, wire):
            raise _Malformed(path, f"arrived as wire type {wire}, which a {_type_name(field)} field cannot be")


def _check_length_delimited(field: d.FieldDescriptor, body: bytes, path: str) -> None:
    if field.type == d.FieldDescriptor.TYPE_MESSAGE and field.message_type is not None:
        _walk(field.message_type, body, path)
    elif field.type == d.FieldDescriptor.TYPE_STRING:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            raise _Malformed(path, "is not valid UTF-8") from None


def _wire_fits(field: d.FieldDescriptor, wire: int) -> bool:
    if field.type in _LENGTH_TYPES:
        return wire == _LEN
    expected = _SCALAR_WIRE.get(field.type, _VARINT)
    return wire == expected or (field.is_repeated and wire == _LEN)


def _type_name(field: d.FieldDescriptor) -> str:
    for name, value in vars(d.FieldDescriptor).items():
        if name.startswith("TYPE_") and value == field.type:
            return name[5:].lower()
    return "scalar"


def locate_malformed(desc: Any, data: bytes) -> tuple[str, str] | None:
    """(the field path, what is wrong with it) for bytes that do not decode as
    `desc`; None when the walk finds nothing it can name."""
    try:
        _walk(desc, data, "")
    except _Malformed as exc:
        return exc.path, exc.reason
    return None
