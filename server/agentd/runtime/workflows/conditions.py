"""A branch's condition written as data (agentd.toml): a test of one field of
the previous step's output, or all / any / not of such tests. Nothing is
evaluated as code.

    { field = "score", gte = 50 }                  # output["score"] >= 50
    { field = "labels", contains = "urgent" }
    { field = "kind", in = ["a", "b"] }
    { field = "items.0.id", exists = true }        # a dotted path; numbers index lists
    { all = [ {...}, {...} ] }   { any = [...] }   { not = {...} }

`field` absent or "" tests the whole output. A missing field fails every
test but `exists = false` (and `not_equals`); an ordering test between values
of different kinds (a number and a string) is false, never an error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

_MISSING = object()

_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": lambda a, b: a > b,
    "gte": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "lte": lambda a, b: a <= b,
}
OPERATORS = frozenset({"equals", "not_equals", "in", "contains", "exists", *_ORDERINGS})
COMBINATORS = frozenset({"all", "any", "not"})


class FieldTest:
    """A condition compiled from its data form; `ValueError` names what is wrong."""

    def __init__(self, spec: Any, where: str = "when") -> None:
        self._test = _compile(spec, where)
        self.spec = spec

    def __call__(self, output: Any) -> bool:
        return self._test(output)

    def __repr__(self) -> str:
        return f"FieldTest({self.spec!r})"


def _compile(spec: Any, where: str) -> Callable[[Any], bool]:
    if not isinstance(spec, Mapping) or not spec:
        raise ValueError(f'{where}: a table such as {{ field = "score", gte = 50 }}, or all / any / not')
    combinators = COMBINATORS & set(spec)
    if combinators:
        name = sorted(combinators)[0]
        if len(spec) != 1:
            raise ValueError(f"{where}: {name} stands alone in its table")
        if name == "not":
            inner = _compile(spec["not"], f"{where}.not")
            return lambda output: not inner(output)
        items = spec[name]
        if not isinstance(items, list) or not items:
            raise ValueError(f"{where}.{name}: a non-empty list of conditions")
        tests = [_compile(item, f"{where}.{name}[{i}]") for i, item in enumerate(items)]
        if name == "all":
            return lambda output: all(t(output) for t in tests)
        return lambda output: any(t(output) for t in tests)
    unknown = sorted(set(spec) - OPERATORS - {"field"})
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(unknown)} "
            f"(a test is field plus one of {', '.join(sorted(OPERATORS))}; or all / any / not)"
        )
    operators = sorted(OPERATORS & set(spec))
    if len(operators) != 1:
        raise ValueError(f"{where}: exactly one of {', '.join(sorted(OPERATORS))} (found {operators or 'none'})")
    op, expected = operators[0], spec[operators[0]]
    path = spec.get("field", "")
    if not isinstance(path, str):
        raise ValueError(f'{where}.field: a dotted path such as "result.score"')
    segments = [s for s in path.split(".") if s] if path not in ("", "$") else []
    if op == "exists" and not isinstance(expected, bool):
        raise ValueError(f"{where}.exists: true or false")
    if op == "in" and not isinstance(expected, list):
        raise ValueError(f"{where}.in: a list of values")
    return lambda output: _holds(op, _lookup(output, segments), expected)


def _lookup(value: Any, segments: list[str]) -> Any:
    for segment in segments:
        if isinstance(value, Mapping):
            value = value.get(segment, _MISSING)
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def _holds(op: str, actual: Any, expected: Any) -> bool:
    if op == "exists":
        return (actual is not _MISSING) is bool(expected)
    if op == "not_equals":
        return actual is _MISSING or actual != expected
    if actual is _MISSING:
        return False
    if op == "equals":
        return bool(actual == expected)
    if op == "in":
        return actual in expected
    if op == "contains":
        return isinstance(actual, (str, list)) and (
            expected in actual if isinstance(actual, list) or isinstance(expected, str) else False
        )
    try:
        return bool(_ORDERINGS[op](actual, expected)) and not isinstance(actual, bool)
    except TypeError:
        return False
