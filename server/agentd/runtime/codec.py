"""agentd's serialisation of runtime values: tagged JSON, never pickle.

One format for every runtime value that leaves the process: response-cache
entries, storage rows (messages, pending signals, notification records) and
the messages replicas exchange over the cluster.

JSON scalars, lists and dicts with string keys are written as themselves.
Everything else is an object whose "$t" key names its type:

    bytes      {"$t": "bytes", "v": "<base64>"}
    tuple      {"$t": "tuple", "v": [...]}
    datetime   {"$t": "datetime", "v": "<ISO 8601>"}
    other dict {"$t": "dict", "v": [[key, value], ...]}  (non-string keys, or a "$t" key)
    dataclass  {"$t": "<class name>", <field>: <value>, ...}  (fields equal to their default left out)

Only the types listed here (and those added with `register`) can be decoded:
whoever can write to a shared cache can make agentd build these dataclasses
with data of their choosing, and nothing more. An unknown tag, a malformed
entry or a value that cannot be encoded raises CacheError (the error of the
first user, the response cache, kept for every use).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import typing
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any

from agentd.runtime import chunks, messages, storage
from agentd.runtime.cache import CacheError
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.processors.base import CachedLLMResponse

__all__ = ["TAG", "decode", "encode", "register"]

#: The key that marks a tagged object.
TAG = "$t"

_BYTES = "bytes"
_TUPLE = "tuple"
_DATETIME = "datetime"
_DICT = "dict"
_BUILTIN_TAGS = frozenset({_BYTES, _TUPLE, _DATETIME, _DICT})

_MISSING: Any = dataclasses.MISSING
#: default_factory values whose empty result can be left out of the encoding.
_EMPTY_FACTORIES: tuple[Callable[[], Any], ...] = (list, dict, tuple)


@dataclasses.dataclass(frozen=True, slots=True)
class _Codec:
    cls: type
    tag: str
    #: (name, default, default_factory) of every init field.
    fields: tuple[tuple[str, Any, Any], ...]
    names: frozenset[str]


def _codec(cls: type, tag: str) -> _Codec:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__qualname__} is not a dataclass")
    if tag in _BUILTIN_TAGS:
        raise ValueError(f"cache codec tag {tag!r} is reserved")
    fields = tuple((f.name, f.default, f.default_factory) for f in dataclasses.fields(cls) if f.init)
    return _Codec(cls, tag, fields, frozenset(name for name, _, _ in fields))


def _allowed_types() -> list[type]:
    return [
        *typing.get_args(chunks.Payload),
        chunks.Chunk,
        chunks.Usage,
        chunks.Tripwire,
        *typing.get_args(messages.Part),
        messages.Message,
        ModelFinish,
        CachedLLMResponse,
        messages.Signal,
        storage.PendingSignal,
        storage.BackgroundTask,
    ]


@cache
def _builtin_registry() -> tuple[dict[str, _Codec], dict[type, _Codec]]:
    by_tag: dict[str, _Codec] = {}
    for cls in _allowed_types():
        codec = _codec(cls, cls.__name__)
        if codec.tag in by_tag and by_tag[codec.tag].cls is not cls:
            raise RuntimeError(f"cache codec: two types are named {codec.tag}")
        by_tag[codec.tag] = codec
    return by_tag, {c.cls: c for c in by_tag.values()}


# Added by `register`, beside the built-in allow-list.
_extra: dict[str, _Codec] = {}
_extra_by_type: dict[type, _Codec] = {}


def register(cls: type, tag: str | None = None) -> None:
    """Adds a dataclass to the allow-list (tag: its class name unless given)."""
    codec = _codec(cls, tag or cls.__name__)
    by_tag, by_type = _builtin_registry()
    known = by_tag.get(codec.tag) or _extra.get(codec.tag)
    if known is not None and known.cls is not cls:
        raise ValueError(f"cache codec tag {codec.tag!r} is already used by {known.cls.__qualname__}")
    if cls in by_type:
        return
    _extra[codec.tag] = codec
    _extra_by_type[cls] = codec


def _for_type(cls: type) -> _Codec | None:
    return _builtin_registry()[1].get(cls) or _extra_by_type.get(cls)


def _for_tag(tag: str) -> _Codec | None:
    return _builtin_registry()[0].get(tag) or _extra.get(tag)


# ---------------------------------------------------------------- encoding


def _is_default(value: Any, default: Any, factory: Any) -> bool:
    if default is not _MISSING:
        return value is default or (type(value) is type(default) and value == default)
    if factory in _EMPTY_FACTORIES:
        return type(value) is factory and not value
    return False


def _to_json(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        if TAG not in value and all(isinstance(k, str) for k in value):
            return {k: _to_json(v) for k, v in value.items()}
        return {TAG: _DICT, "v": [[_to_json(k), _to_json(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {TAG: _BYTES, "v": base64.b64encode(value).decode("ascii")}
    if isinstance(value, tuple):
        return {TAG: _TUPLE, "v": [_to_json(v) for v in value]}
    if isinstance(value, datetime):
        return {TAG: _DATETIME, "v": value.isoformat()}
    codec = _for_type(type(value))
    if codec is None:
        raise CacheError(f"cannot cache a value of type {type(value).__qualname__}")
    out: dict[str, Any] = {TAG: codec.tag}
    for name, default, factory in codec.fields:
        item = getattr(value, name)
        if not _is_default(item, default, factory):
            out[name] = _to_json(item)
    return out


def encode(value: Any) -> bytes:
    """The compact UTF-8 JSON form of `value`; CacheError when a part of it has no encoding."""
    try:
        text = json.dumps(_to_json(value), ensure_ascii=False, separators=(",", ":"))
    except RecursionError as exc:
        raise CacheError("cannot cache a value nested this deeply (or one that contains itself)") from exc
    except ValueError as exc:  # e.g. a circular reference json detected
        raise CacheError(f"cannot cache this value: {exc}") from exc
    # surrogatepass: any Python str round-trips, even one holding a lone surrogate.
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- decoding


def _field(obj: dict[str, Any], kind: type) -> Any:
    value = obj.get("v")
    if set(obj) != {TAG, "v"} or not isinstance(value, kind):
        raise CacheError(f"malformed cached {obj[TAG]}")
    return value


def _from_tagged(obj: dict[str, Any], ignore_unknown_fields: bool = False) -> Any:
    tag = obj.get(TAG)
    if tag is None:
        return obj
    if not isinstance(tag, str):
        raise CacheError("malformed cached value: a tag that is not a string")
    if tag == _BYTES:
        try:
            return base64.b64decode(_field(obj, str), validate=True)
        except binascii.Error as exc:
            raise CacheError(f"malformed cached bytes: {exc}") from exc
    if tag == _TUPLE:
        return tuple(_field(obj, list))
    if tag == _DATETIME:
        try:
            return datetime.fromisoformat(_field(obj, str))
        except ValueError as exc:
            raise CacheError(f"malformed cached datetime: {exc}") from exc
    if tag == _DICT:
        pairs = _field(obj, list)
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise CacheError("malformed cached dict")
        try:
            return {k: v for k, v in pairs}
        except TypeError as exc:  # an unhashable key
            raise CacheError(f"malformed cached dict: {exc}") from exc
    codec = _for_tag(tag)
    if codec is None:
        raise CacheError(f"cannot decode a cached value of unknown type {tag!r}")
    kwargs = {k: v for k, v in obj.items() if k != TAG}
    unknown = kwargs.keys() - codec.names
    if unknown:
        if not ignore_unknown_fields:
            raise CacheError(f"cached {tag} has unknown fields: {', '.join(sorted(unknown))}")
        for name in unknown:
            del kwargs[name]
    try:
        return codec.cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CacheError(f"malformed cached {tag}: {exc}") from exc


def _from_tagged_ignoring_unknown_fields(obj: dict[str, Any]) -> Any:
    return _from_tagged(obj, ignore_unknown_fields=True)


def decode(data: bytes | str, *, ignore_unknown_fields: bool = False) -> Any:
    """The value `encode` wrote; CacheError when `data` is not such an encoding.

    `ignore_unknown_fields`: a dataclass field this version does not know is
    dropped instead of refused. Replicas read each other's messages this way,
    so that during a rolling upgrade a field a newer replica adds (always one
    with a default, written only when it holds something else) reaches an
    older one as the value that older one knows, not as a message it drops."""
    hook = _from_tagged_ignoring_unknown_fields if ignore_unknown_fields else _from_tagged
    try:
        text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
        return json.loads(text, object_hook=hook)
    except CacheError:
        raise
    except RecursionError as exc:
        raise CacheError("malformed cached value: nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise CacheError(f"malformed cached value: {exc}") from exc
