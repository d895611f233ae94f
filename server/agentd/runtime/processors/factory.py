"""Building a processor from its options (agentd.toml, per-call specs, RPC).

Options arrive as JSON (camelCase, as in the reference docs: `maxRetries`,
`filterAfterToolSteps`; snake_case works too); `option_reader` maps them onto
a processor's snake_case constructor, names any option it does not take, and
turns an integral float into the int the constructor declares: options that
came over gRPC as a protobuf Struct carry every number as a float
(`{"limit": 2000}` arrives as 2000.0). `from_options` is the factory built on it.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, fields
from typing import Any, Union

from agentd.runtime.cache import ServerCache
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.processors.base import check_hooks

Factory = Callable[[dict[str, Any]], Any]
#: The `backend` option of a factory bound to the server's caches.
CACHE_BACKENDS = ("memory", "redis")
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _wants_int(hint: Any) -> bool:
    """True for `int` and `int | None`; False where a float is welcome too (or for bool)."""
    members = typing.get_args(hint) if typing.get_origin(hint) in (Union, types.UnionType) else (hint,)
    return int in members and float not in members


def _hints(target: Any) -> dict[str, Any]:
    """The resolved annotations of a function or a dataclass. One that cannot be
    resolved (a name imported only for type checking) is left out."""
    try:
        return typing.get_type_hints(target)
    except Exception:
        namespace = getattr(target, "__globals__", None) or vars(inspect.getmodule(target) or typing)
        hints: dict[str, Any] = {}
        for name, annotation in getattr(target, "__annotations__", {}).items():
            one = types.SimpleNamespace(__annotations__={name: annotation})
            try:
                hints[name] = typing.get_type_hints(one, namespace)[name]
            except Exception:
                continue
        return hints


@dataclass(frozen=True, slots=True)
class Declared:
    """The options a constructor (or a dataclass) declares."""

    #: In declaration order; a `**options: Unpack[SomeTypedDict]` adds the TypedDict's keys.
    names: tuple[str, ...]
    #: Those declared `int` or `int | None`.
    ints: frozenset[str]
    #: A bare `**kwargs`: any option is taken.
    takes_any: bool


def declared_options(target: Any) -> Declared:
    if dataclasses.is_dataclass(target):
        hints = _hints(target)
        names = tuple(f.name for f in fields(target) if f.init)
        return Declared(names, frozenset(n for n in names if _wants_int(hints.get(n))), False)
    hints = _hints(typing.cast(Any, target).__init__ if isinstance(target, type) else target)
    declared: list[str] = []
    takes_any = False
    for name, param in inspect.signature(target).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            hint = hints.get(name)
            if typing.get_origin(hint) is typing.Unpack:
                typed = _hints(typing.get_args(hint)[0])
                declared.extend(typed)
                hints = {**typed, **hints}
            else:
                takes_any = True
        elif param.kind is not param.VAR_POSITIONAL:
            declared.append(name)
    return Declared(tuple(declared), frozenset(n for n in declared if _wants_int(hints.get(n))), takes_any)


def int_options(target: Any) -> frozenset[str]:
    """The options of `target` declared `int` or `int | None`."""
    return declared_options(target).ints


def _integral(kwargs: dict[str, Any], ints: Collection[str]) -> dict[str, Any]:
    """An integral float becomes the int the constructor declares; 2.5 stays for it to refuse."""
    for name in ints:
        value = kwargs.get(name)
        if isinstance(value, float) and value.is_integer():
            kwargs[name] = int(value)
    return kwargs


OptionReader = Callable[[Mapping[str, Any]], dict[str, Any]]


def option_reader(cls: Callable[..., Any], *, extra: tuple[str, ...] = (), skip: tuple[str, ...] = ()) -> OptionReader:
    """Maps options onto the snake_case keyword arguments of `cls`. `extra`
    names options a bound factory takes itself, `skip` parameters it fills
    itself (they are no options). The reader raises ValueError naming an
    unknown option or one given twice."""
    declared = declared_options(cls)
    takes = [*extra, *(n for n in declared.names if n not in skip)]
    own_id = getattr(cls, "id", None)
    prefix = f"{own_id}: " if isinstance(own_id, str) and own_id else ""

    def read(options: Mapping[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        unknown: list[str] = []
        for key, value in options.items():
            name = snake(str(key))
            if name not in takes and (not declared.takes_any or name in skip):
                unknown.append(repr(key))
            elif name in kwargs:
                raise ValueError(f"{prefix}option {camel(name)!r} given twice")
            kwargs[name] = value
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            listing = ", ".join(camel(n) for n in takes) or "none"
            raise ValueError(f"{prefix}unknown option{plural} {', '.join(unknown)} (takes: {listing})")
        return _integral(kwargs, declared.ints)

    return read


def from_options(cls: Callable[..., Any]) -> Factory:
    """A factory calling `cls(**kwargs)` with the kwargs `option_reader` reads;
    its errors are InvalidArgument on `options`. A class with a `process_*`
    method that is no hook is refused here, when registered."""
    check_hooks(cls)
    read = option_reader(cls)

    def build(options: dict[str, Any]) -> Any:
        try:
            return cls(**read(options))
        except (TypeError, ValueError) as exc:
            raise InvalidArgument.field("options", str(exc)) from None

    return build


def server_cache(caches: Mapping[str, ServerCache], backend: Any, who: str) -> ServerCache:
    """The cache a bound factory's `backend` option names (ValueError when the
    server has none by that name)."""
    if backend not in CACHE_BACKENDS:
        raise ValueError(f"{who}: unknown backend {backend!r} (takes: {', '.join(CACHE_BACKENDS)})")
    cache = caches.get(backend)
    if cache is None:
        raise ValueError(f"{who}: backend {backend!r} is not configured on this server")
    return cache


def dataclass_from_options(cls: Any, options: Mapping[str, Any], where: str, *, tuples: tuple[str, ...] = ()) -> Any:
    """`cls(**options)` for a dataclass of nested options (camelCase keys accepted);
    `tuples` names list-valued fields stored as tuples."""
    names = {f.name for f in fields(cls)}
    kwargs = {snake(str(k)): v for k, v in options.items()}
    unknown = sorted(k for k in kwargs if k not in names)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in tuples:
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    return cls(**_integral(kwargs, int_options(cls)))
