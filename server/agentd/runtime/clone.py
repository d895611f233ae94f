"""A fast deep copy for the runtime's own values (chunk payloads, messages).

`copy.deepcopy` goes through `__reduce_ex__` for slotted dataclasses and is
the hot spot of a cache-hit run; this walks dataclass fields directly and
shares immutable leaves. Anything it does not know falls back to deepcopy.
"""

from __future__ import annotations

import copy
from dataclasses import fields, is_dataclass
from datetime import datetime
from typing import TypeVar

T = TypeVar("T")
_IMMUTABLE = (str, int, float, bool, bytes, type(None), datetime)
#: The same types exactly: a set lookup answers for most leaves without a call.
_LEAVES = frozenset(_IMMUTABLE)
_FIELDS: dict[type, tuple[str, ...]] = {}
_set = object.__setattr__  # also works on frozen dataclasses


def clone(value: T) -> T:
    cls = type(value)
    if cls in _LEAVES:
        return value
    leaves = _LEAVES
    names = _FIELDS.get(cls)
    if names is not None:  # a dataclass seen before
        new = object.__new__(cls)
        for name in names:
            field = getattr(value, name)
            _set(new, name, field if type(field) in leaves else clone(field))
        return new
    if cls is list:
        return [v if type(v) in leaves else clone(v) for v in value]  # type: ignore[attr-defined, return-value]
    if cls is dict:
        return {k: v if type(v) in leaves else clone(v) for k, v in value.items()}  # type: ignore[attr-defined, return-value]
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, list):
        return [clone(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)  # type: ignore[return-value]
    if is_dataclass(value):
        _FIELDS[cls] = tuple(f.name for f in fields(value))
        return clone(value)
    return copy.deepcopy(value)
