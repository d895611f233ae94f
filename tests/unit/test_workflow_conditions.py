"""A branch condition written as data: each operator, paths into lists and
tables, missing fields, mixed kinds, and the combinators."""

from __future__ import annotations

from typing import Any

import pytest

from agentd.runtime import FieldTest

OUTPUT = {"score": 7, "name": "ticket-42", "tags": ["urgent", "billing"], "items": [{"id": "a"}], "flag": True}


@pytest.mark.parametrize(
    ("spec", "holds"),
    [
        ({"field": "score", "equals": 7}, True),
        ({"field": "score", "not_equals": 7}, False),
        ({"field": "missing", "not_equals": 7}, True),
        ({"field": "score", "gt": 6}, True),
        ({"field": "score", "gte": 7}, True),
        ({"field": "score", "lt": 7}, False),
        ({"field": "score", "lte": 7}, True),
        ({"field": "name", "gt": 3}, False),  # a string and a number: false, not an error
        ({"field": "flag", "gt": 0}, False),  # true is no number here
        ({"field": "name", "contains": "42"}, True),
        ({"field": "tags", "contains": "urgent"}, True),
        ({"field": "score", "contains": 7}, False),
        ({"field": "name", "in": ["ticket-42", "x"]}, True),
        ({"field": "items.0.id", "equals": "a"}, True),
        ({"field": "items.1.id", "exists": True}, False),
        ({"field": "items.1.id", "exists": False}, True),
        ({"field": "missing", "equals": None}, False),
        ({"equals": OUTPUT}, True),  # no field: the whole output
        ({"all": [{"field": "score", "gt": 5}, {"field": "tags", "contains": "billing"}]}, True),
        ({"any": [{"field": "score", "gt": 50}, {"field": "missing", "exists": True}]}, False),
        ({"not": {"field": "score", "gt": 50}}, True),
    ],
)
def test_a_field_test_holds_as_its_operator_says(spec: dict[str, Any], holds: bool) -> None:
    assert FieldTest(spec)(OUTPUT) is holds


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"field": "x"}, "when: exactly one of"),
        ({"field": "x", "gt": 1, "lt": 2}, "when: exactly one of"),
        ({"field": "x", "like": "y"}, "when: unknown key(s) like"),
        ({"field": 3, "equals": 1}, "when.field: a dotted path"),
        ({"field": "x", "exists": "yes"}, "when.exists: true or false"),
        ({"field": "x", "in": "abc"}, "when.in: a list of values"),
        ({"all": []}, "when.all: a non-empty list of conditions"),
        ({"not": {"field": "x"}}, "when.not: exactly one of"),
        ({"not": {"field": "x", "gt": 1}, "field": "y"}, "when: not stands alone in its table"),
        ("score > 5", "when: a table such as"),
    ],
)
def test_a_malformed_test_is_refused_naming_where(spec: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        FieldTest(spec)
    assert message in str(info.value)
