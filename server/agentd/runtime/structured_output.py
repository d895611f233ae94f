"""Reading a model's answer as the JSON object a schema asks for, and the
prompts of the two ways a run gets one (Mastra's "direct" and "processor"
modes, see `options.StructuredOutput`):

* direct (no `model`): the agent's model is sent the schema and its final
  answer is the object;
* structuring (`model` set): the agent's model is told which fields its
  answer should cover (`schema_note`) and answers in text, with its tools;
  then the structuring model reads the run's text, tool calls and results
  (`structuring_prompt`) and answers with the object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentd.runtime.lazy import lazy
from agentd.runtime.results import StepResult

if TYPE_CHECKING:
    import jsonschema
else:
    jsonschema = lazy("jsonschema")  # structured output only: loaded on first use

#: The structuring model's system prompt unless `instructions` replaces it.
DEFAULT_INSTRUCTIONS = (
    "You are a data structuring specialist. Convert the text you are given into JSON that matches the "
    "requested schema.\n"
    "- Answer with the JSON only, no other text.\n"
    "- Take the values from the text; keep their meaning and details.\n"
    "- Where the text has no value for a field, use null or a reasonable default.\n"
    "- Keep the types the schema asks for."
)


def strip_fences(text: str) -> str:
    """The JSON inside a ```json fence, for models that wrap their answer."""
    text = text.strip()
    if text.startswith("```"):
        first_newline = text.find("\n")
        body = text[first_newline + 1 :] if first_newline != -1 else ""
        if body.rstrip().endswith("```"):
            body = body.rstrip()[:-3]
        return body.strip()
    return text


def schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Where `value` first fails `schema` and the rule it fails (`/city fails
    'type'`), or None when it matches. Never the values: they may quote
    content that must not reach a log."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    return f"/{'/'.join(str(p) for p in error.absolute_path)} fails {str(error.validator)!r}"


def read_object(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The object in a model's answer and None, or None and what is wrong with it."""
    if not text.strip():
        return None, "the answer is empty"
    try:
        value = json.loads(strip_fences(text))
    except ValueError:
        return None, f"the answer is not JSON ({len(text)} characters)"
    return check_object(value, schema)


def check_object(value: Any, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """`value` and None when it matches `schema`, else None and what is wrong."""
    problem = schema_problem(schema, value)
    if problem is not None:
        return None, f"the answer does not match the schema ({problem})"
    return value, None


def schema_note(schema: dict[str, Any]) -> str:
    """What the agent's model is told when a structuring model makes the object."""
    return (
        "Your response will be processed by another agent to extract structured data. Make sure it contains "
        "comprehensive information for every field of this JSON Schema:\n"
        f"{json.dumps(schema, separators=(',', ':'))}\n"
        "You need not format your response as JSON unless the user asks for it: answer in natural language "
        "that covers each field."
    )


def structuring_prompt(steps: Sequence[StepResult]) -> str:
    """The run's reasoning, tool calls, tool results and text, as the
    structuring model reads them."""
    reasoning = "".join(s.reasoning_text for s in steps)
    calls = [c for s in steps for c in s.tool_calls]
    results = [r for s in steps for r in s.tool_results]
    text = "".join(s.text for s in steps)
    sections: list[str] = []
    if reasoning:
        sections.append(f"# Assistant Reasoning\n{reasoning}")
    if calls:
        listed = "\n".join(f"## {c.tool_name}\n### Input: {_json(c.args)}" for c in calls)
        sections.append(f"# Tool Calls\n{listed}")
    if results:
        listed = "\n".join(f"{r.tool_name}: {_json(r.result)}" for r in results)
        sections.append(f"# Tool Results\n{listed}")
    if text:
        sections.append(f"# Assistant Response\n{text}")
    return (
        "Extract and structure the key information from the following text according to the schema. "
        "Keep the original meaning and details.\n\n" + "\n\n".join(sections)
    )


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
