"""Every string of a protobuf message, rewritten in place: how replies are
given back in the caller's ids (tenancy) and with no secret in them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from google.protobuf import descriptor, message

__all__ = ["map_strings"]

_STRING: Final = descriptor.FieldDescriptor.TYPE_STRING
_MESSAGE: Final = descriptor.FieldDescriptor.TYPE_MESSAGE


def map_strings(msg: message.Message, change: Callable[[str], str]) -> None:
    """Replaces each string field's value (and each map value's, and each
    nested message's) with `change(value)`; map keys are left as they are."""
    for field, value in msg.ListFields():
        if field.type == _STRING:
            if field.is_repeated:
                items = list(value)
                changed = [change(item) for item in items]
                if changed != items:
                    del value[:]
                    value.extend(changed)
            else:
                new = change(value)
                if new != value:
                    setattr(msg, field.name, new)
        elif field.type == _MESSAGE:
            if field.message_type is not None and field.message_type.GetOptions().map_entry:
                for key in list(value):
                    entry = value[key]
                    if isinstance(entry, message.Message):
                        map_strings(entry, change)
                    elif isinstance(entry, str):
                        value[key] = change(entry)
            elif field.is_repeated:
                for item in value:
                    map_strings(item, change)
            else:
                map_strings(value, change)
