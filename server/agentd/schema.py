"""The building blocks of agentd.toml's schema (pydantic), and the one place
a validation failure becomes a message that names the key: `cache.backend:
'disk' is not memory or redis`, `storage: unknown key(s) pth (allowed: ...)`,
and, for a value an environment variable gave, the variable."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.dataclasses import is_pydantic_dataclass

__all__ = [
    "Flag",
    "FromEnv",
    "Loc",
    "NonNegative",
    "Number",
    "Positive",
    "Table",
    "Whole",
    "describe",
    "empty_dict",
    "empty_list",
    "from_env",
    "key_path",
    "merge",
    "section",
]

Loc = tuple[str | int, ...]


class Table(BaseModel):
    """A TOML table: a key it does not declare is refused, by name.

    Its validator is built when first used (`defer_build`): agentd.toml is
    validated by one schema, which holds every table, so the tables' own
    validators (20 of them, a tenth of start-up) are never needed to serve."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


def section() -> Any:
    """The default of a table another holds: an absent table is validated as an
    empty one by its parent's schema (a default factory would build the
    table's own deferred validator at each start)."""
    return Field(default_factory=empty_dict, validate_default=True)


# Default factories for the schema's fields, written in Python: building a
# schema, pydantic reads each factory's signature (does it take the validated
# data?), and a builtin's (`dict`, `list`) is parsed from its text by tokenize,
# whose one large pattern compiled was 1.5% of start-up.
def empty_dict() -> dict[str, Any]:
    return {}


def empty_list() -> list[Any]:
    return []


class FromEnv(str):
    """A value as an environment variable spells it: text that may stand for a
    number or a flag. In TOML, a number is written as one ("50051" is text)."""


_TRUE, _FALSE = {"true", "1"}, {"false", "0"}


def _flag(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, FromEnv) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(f"{value!r} is not true or false")


def _whole(value: Any) -> Any:
    # pydantic would take true for 1, and "7" for 7.
    if isinstance(value, bool) or (isinstance(value, str) and not isinstance(value, FromEnv)):
        raise ValueError(f"{value!r} is not a whole number")
    return value


def _number(value: Any) -> Any:
    if isinstance(value, bool) or (isinstance(value, str) and not isinstance(value, FromEnv)):
        raise ValueError(f"{value!r} is not a number")
    return value


Flag = Annotated[bool, BeforeValidator(_flag)]
"""true or false (an environment variable may also say 1 or 0)."""
Whole = Annotated[int, BeforeValidator(_whole)]
Number = Annotated[float, BeforeValidator(_number)]
Positive = Annotated[Number, Field(gt=0)]
NonNegative = Annotated[Number, Field(ge=0)]


def from_env(value: Any) -> Any:
    """The text of a variable's value marked as such, through the tables and lists it was parsed into."""
    if isinstance(value, Mapping):
        return {k: from_env(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_env(v) for v in value]
    return FromEnv(value) if isinstance(value, str) else value


def key_path(loc: Loc) -> str:
    """("auth", "tokens", 0, "sha256") → "auth.tokens[0].sha256"."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _classes(annotation: Any) -> Iterable[type]:
    """The tables an annotation holds (through Optional, list, Annotated)."""
    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation)):
        yield annotation
        return
    for arg in typing.get_args(annotation):
        yield from _classes(arg)


def _fields(cls: type) -> dict[str, Any]:
    """A table's keys and their annotations."""
    if issubclass(cls, BaseModel):
        return {name: f.annotation for name, f in cls.model_fields.items()}
    if is_pydantic_dataclass(cls):
        return {name: f.annotation for name, f in cls.__pydantic_fields__.items()}
    return {f.name: f.type for f in dataclasses.fields(cls)}  # type: ignore[arg-type]


def _table_at(root: type, loc: Loc) -> type | None:
    cls: type | None = root
    for part in loc:
        if cls is None:
            return None
        if isinstance(part, int):
            continue
        annotation = _fields(cls).get(part)
        cls = next(iter(_classes(annotation)), None)
    return cls


_UNKNOWN = {"extra_forbidden", "unexpected_keyword_argument"}


def _why(error: Mapping[str, Any]) -> str:
    """One failure in agentd's words."""
    kind, value, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        return f"{value!r} is not {expected}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"{value!r} is not a whole number"
    if kind in ("float_type", "float_parsing"):
        return f"{value!r} is not a number"
    if kind in ("bool_type", "bool_parsing"):
        return f"{value!r} is not true or false"
    if kind == "greater_than":
        return f"{value!r} is not positive" if ctx.get("gt") == 0 else f"{value!r} is not over {ctx.get('gt')}"
    if kind == "greater_than_equal":
        return f"{value!r} is negative" if ctx.get("ge") == 0 else f"{value!r} is under {ctx.get('ge')}"
    if kind in ("less_than_equal", "less_than"):
        return f"{value!r} is over {ctx.get('le', ctx.get('lt'))}"
    if kind == "string_type":
        return f"{value!r} is not a string"
    if kind in ("model_type", "model_attributes_type", "dict_type", "dataclass_type", "dataclass_args_type"):
        return "must be a table"
    if kind in ("list_type", "tuple_type"):
        return f"{value!r} is not a list"
    if kind == "missing":
        return "required"
    return str(error["msg"])


def describe(
    exc: ValidationError,
    root: type,
    *,
    where: str,
    source: Callable[[Loc], str | None] = lambda loc: None,
) -> str:
    """The failures of validating `root`, each naming its key; `where` names
    the whole (the file), `source` the environment variable a key came from."""

    def at(loc: Loc) -> str:
        name = key_path(loc) or where
        variable = source(loc)
        return f"{name} (from {variable})" if variable else name

    unknown: dict[Loc, list[str]] = {}
    messages: list[str] = []
    for error in exc.errors():
        loc: Loc = tuple(error["loc"])
        if error["type"] in _UNKNOWN and loc:
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
            continue
        why = _why(error)
        name = key_path(loc)
        # A check that names its own key ("auth.limits: ...") is not prefixed again.
        messages.append(why if not loc or why.startswith(name) else f"{at(loc)}: {why}")
    for parent, names in unknown.items():
        table = _table_at(root, parent)
        allowed = sorted(_fields(table)) if table is not None else []
        variables = [v for v in (source((*parent, n)) for n in names) if v]
        name = key_path(parent) or where
        if variables:
            name += f" (from {', '.join(variables)})"
        messages.insert(0, f"{name}: unknown key(s) {', '.join(sorted(names))} (allowed: {', '.join(allowed)})")
    return "; ".join(messages)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`over` laid onto `base`, table by table (a list or a value replaces)."""
    out = dict(base)
    for key, value in over.items():
        below = out.get(key)
        out[key] = merge(below, value) if isinstance(below, Mapping) and isinstance(value, Mapping) else value
    return out
