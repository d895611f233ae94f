"""The structured-output object at the end of a run: read from the last
step's answer, or made by the structuring model from the whole run (see
`structured_output`), and the error strategy applied when that fails."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Error, ObjectPartial, TextDelta, Usage
from agentd.runtime.errors import FailedPrecondition
from agentd.runtime.messages import Message
from agentd.runtime.models.base import LanguageModel, ModelAPIError, ModelFinish, ModelRequest
from agentd.runtime.options import StructuredOutput
from agentd.runtime.results import StepResult
from agentd.runtime.structured_output import DEFAULT_INSTRUCTIONS, check_object, read_object, structuring_prompt

log = logging.getLogger("agentd.run")

#: The reason of a strict run whose answer is not the object asked for.
STRUCTURED_OUTPUT_INVALID = "STRUCTURED_OUTPUT_INVALID"
#: Finish reasons of an answer cut short: never read as the object.
_CUT_SHORT = ("length", "content-filter")


@dataclass(slots=True)
class Structured:
    """What the run answers with: `found` is False when there is no object
    (warn); `warnings` go to the result."""

    found: bool = False
    object: Any = None
    warnings: list[str] = field(default_factory=list)
    #: What the structuring model's call used (it counts in the run's total).
    usage: Usage = field(default_factory=Usage)


async def structured_object(
    structured: StructuredOutput,
    steps: list[StepResult],
    *,
    model: Callable[[str], LanguageModel],
    provider_options: dict[str, Any],
    run_id: str,
) -> Structured:
    """The run's object under `structured.error_strategy`; a strict failure
    raises FailedPrecondition (STRUCTURED_OUTPUT_INVALID), and a failed
    structuring call its ModelAPIError."""
    usage = Usage()
    answered = [s for s in steps if s.tripwire is None]
    last = answered[-1] if answered else None
    if last is None:
        problem: str | None = "the run gave no answer"
        value: Any = None
    elif last.finish_reason in _CUT_SHORT:
        problem, value = f"the answer was cut short (finish reason {last.finish_reason})", None
    elif structured.model is None:
        value, problem = read_object(last.text, structured.schema)
    else:
        try:
            text, value, usage = await _structure(structured, answered, model(structured.model), provider_options)
        except ModelAPIError as exc:
            raise_if_cancelling(exc)  # the run was cancelled: no fallback value, no warning
            if structured.error_strategy == "strict":
                raise
            problem, value = f"the structuring model {structured.model} failed ({exc.message})", None
        else:
            if value is None:
                value, problem = read_object(text, structured.schema)
            else:
                value, problem = check_object(value, structured.schema)
    if problem is None:
        return Structured(True, value, usage=usage)
    message = f"structured output: {problem}"
    if structured.error_strategy == "strict":
        raise FailedPrecondition(message, STRUCTURED_OUTPUT_INVALID)
    if structured.error_strategy == "warn":
        log.warning("run %s: %s; it ends with no object", run_id, message)
        return Structured(warnings=[message], usage=usage)
    log.info("run %s: %s; it ends with the fallback value", run_id, message)
    return Structured(True, structured.fallback_value, [f"{message}; the fallback value was used"], usage)


async def _structure(
    structured: StructuredOutput, steps: list[StepResult], model: LanguageModel, provider_options: dict[str, Any]
) -> tuple[str, Any, Usage]:
    """Asks the structuring model; its text, its object when it streamed one, and its usage."""
    system = Message.system(structured.instructions or DEFAULT_INSTRUCTIONS)
    request = ModelRequest(
        prompt=[system, Message.user(structuring_prompt(steps))],
        provider_options=dict(provider_options),
        structured_output=replace(structured, model=None, instructions=None),
    )
    texts: list[str] = []
    value: Any = None
    finished: ModelFinish | None = None
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            texts.append(event.text)
        elif isinstance(event, ObjectPartial):
            value = event.object
        elif isinstance(event, Error):
            raise ModelAPIError(event.message, status_code=event.status_code, provider_code=event.provider_code)
        elif isinstance(event, ModelFinish):
            finished = event
    if finished is None:
        raise ModelAPIError("the structuring model's stream ended without a finish event", retryable=True)
    return "".join(texts), value, finished.usage
