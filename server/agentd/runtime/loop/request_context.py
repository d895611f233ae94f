"""The caller's request context checked against the agent's `request_context_schema`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from agentd.runtime.errors import FieldViolation
from agentd.runtime.lazy import lazy

if TYPE_CHECKING:
    import jsonschema
else:
    jsonschema = lazy("jsonschema")  # request-context schemas only: loaded on first use


def context_violations(schema: dict[str, Any], context: dict[str, Any]) -> list[FieldViolation]:
    """Where the caller's request context breaks the agent's schema, each a field of `options.request_context`."""
    validator = jsonschema.Draft202012Validator(schema)
    out: list[FieldViolation] = []
    for error in sorted(validator.iter_errors(context), key=lambda e: list(e.absolute_path)):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        if error.validator == "required":
            missing = re.match(r"'([^']+)'", error.message)
            if missing:
                path += f".{missing.group(1)}"
        out.append(FieldViolation(f"options.request_context{path}", error.message))
    return out
