"""A fast deep copy for the runtime's own values (chunk payloads, messages).

`copy.deepcopy` goes through `__reduce_ex__` for slotted dataclasses and is
the hot spot of a cache-hit run; this copies dataclass fields directly and
shares immutable leaves. Each dataclass gets a copier of its own the first
time one is cloned, written out field by field (as `dataclasses` writes
`__init__`), so a copy costs no loop over names and no call per field; a
field annotated with immutable types only (`str`, `int | None`, a `Literal`,
`datetime`...) is shared as it is, without a look at its value's type (the
annotations are the contract: mypy holds the runtime's own code to them).
Anything it does not know falls back to deepcopy.
"""

from __future__ import annotations

import copy
import types
from collections.abc import Callable
from dataclasses import fields, is_dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

T = TypeVar("T")
_IMMUTABLE = (str, int, float, bool, bytes, type(None), datetime)
#: The same types exactly: a set lookup answers for most leaves without a call.
_LEAVES = frozenset(_IMMUTABLE)
#: A copier per dataclass seen.
_COPIERS: dict[type, Callable[[Any], Any]] = {}


def clone(value: T) -> T:
    cls = type(value)
    if cls in _LEAVES:
        return value
    copier = _COPIERS.get(cls)
    if copier is not None:  # a dataclass seen before
        return copier(value)  # type: ignore[no-any-return]
    leaves = _LEAVES
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
        copier = _COPIERS[cls] = _copier(cls, tuple(f.name for f in fields(value)), _leaf_fields(cls))
        return copier(value)  # type: ignore[no-any-return]
    return copy.deepcopy(value)


def _leaf_fields(cls: type) -> frozenset[str]:
    """The fields of `cls` annotated with immutable types only (none when its
    annotations cannot be resolved: then every field's value is looked at)."""
    try:
        hints = get_type_hints(cls)
    except Exception:
        return frozenset()
    return frozenset(name for name, hint in hints.items() if _immutable_type(hint))


def _immutable_type(hint: Any) -> bool:
    if hint is None or hint in _LEAVES:
        return True
    origin = get_origin(hint)
    if origin is Literal:
        return all(type(arg) in _LEAVES for arg in get_args(hint))
    if origin is Union or origin is types.UnionType:
        return all(_immutable_type(arg) for arg in get_args(hint))
    return False


def _copier(cls: type, names: tuple[str, ...], shared: frozenset[str] = frozenset()) -> Callable[[Any], Any]:
    """`cls`'s copier: a new instance (no __init__ runs) with each field cloned.
    A class that guards its attributes (a frozen dataclass) is set through
    object.__setattr__, the others by plain assignment. A field's list or
    dict (a message's parts and metadata) is copied in the copier itself, not
    by a call to clone and one to its comprehension (none when it is empty)."""
    plain = cls.__setattr__ is object.__setattr__  # type: ignore[comparison-overlap]
    lines = ["def copy(value):", "    new = new_(cls)"]
    for name in names:
        if name in shared:  # an immutable field: shared as it is
            lines.append(f"    new.{name} = value.{name}" if plain else f"    set_(new, {name!r}, value.{name})")
            continue
        lines += [
            f"    v = value.{name}",
            "    t = type(v)",
            "    if t in leaves:",
            "        pass",
            "    elif t is list:",
            "        if v:",
            "            items = v",
            "            v = []",
            "            for x in items:",
            "                c = copiers.get(type(x))",  # an item seen before: its copier, without clone's frame
            "                v.append(c(x) if c is not None else x if type(x) in leaves else clone(x))",
            "        else:",
            "            v = []",
            "    elif t is dict:",
            "        v = {k: x if type(x) in leaves else clone(x) for k, x in v.items()} if v else {}",
            "    else:",
            "        v = clone(v)",
            f"    new.{name} = v" if plain else f"    set_(new, {name!r}, v)",
        ]
    lines.append("    return new")
    namespace: dict[str, Any] = {
        "cls": cls,
        "new_": object.__new__,
        "set_": object.__setattr__,
        "leaves": _LEAVES,
        "clone": clone,
        "copiers": _COPIERS,
    }
    exec("\n".join(lines), namespace)  # field names only, from the class itself
    return namespace["copy"]  # type: ignore[no-any-return]
