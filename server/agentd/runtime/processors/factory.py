"""Building a processor from its options (agentd.toml, per-call specs, RPC).

Options arrive as JSON (camelCase, as in the reference docs: `maxRetries`,
`filterAfterToolSteps`); `from_options` maps them onto a processor's
snake_case constructor and names any option it does not take.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.processors.base import check_hooks

Factory = Callable[[dict[str, Any]], Any]
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


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
    return cls(**kwargs)


def from_options(cls: Callable[..., Any]) -> Factory:
    """A factory calling `cls(**options)`, camelCase keys accepted. A class
    with a `process_*` method that is no hook is refused here, when registered."""
    check_hooks(cls)
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def build(options: dict[str, Any]) -> Any:
        kwargs = {snake(k): v for k, v in options.items()}
        unknown = sorted(k for k in kwargs if k not in params and not takes_any)
        if unknown:
            allowed = ", ".join(sorted(p for p in params if p != "self")) or "none"
            raise InvalidArgument.field("options", f"unknown option(s) {', '.join(unknown)} (takes: {allowed})")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument.field("options", str(exc)) from None

    return build
