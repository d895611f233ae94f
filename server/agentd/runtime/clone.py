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
_FIELDS: dict[type, tuple[str, ...]] = {}


def clone(value: T) -> T:
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, list):
        return [clone(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)  # type: ignore[return-value]
    cls = type(value)
    if is_dataclass(value):
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in fields(value))
        new = object.__new__(cls)
        for name in names:  # object.__setattr__ also works on frozen dataclasses
            object.__setattr__(new, name, clone(getattr(value, name)))
        return new
    return copy.deepcopy(value)
