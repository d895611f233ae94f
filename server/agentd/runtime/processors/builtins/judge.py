"""The LLM judge call of the guardrails, and the checks of their options.

The guardrails (moderation, prompt-injection-detector, pii-detector,
language-detector, system-prompt-scrubber) ask a *judge* model for a verdict:
one call with a system prompt, the content as the user message, a JSON Schema
as structured output and temperature 0. The judge fails open: when the call
fails or its answer is not JSON matching the schema, `call_judge` logs ONE
warning on `agentd.processors.<processor id>` and returns None, and the
processor lets the content through (deterministic checks, e.g. PII patterns,
still apply). Through `Guardrail.ask` (guardrail.py), only a processor's first
judge failure in a request is a warning (later ones are debug records), so a
failing judge on a stream does not log once per chunk.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Chunk, Error, ObjectPartial, TextDelta
from agentd.runtime.errors import AgentdError
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import Message, TextPart
from agentd.runtime.models.base import ModelAPIError, ModelRequest
from agentd.runtime.models.router import check_model_spec, resolve_model
from agentd.runtime.options import ModelSettings, StructuredOutput
from agentd.runtime.structured_output import schema_problem, strip_fences

if TYPE_CHECKING:
    import jsonschema
else:
    jsonschema = lazy("jsonschema")  # judge answers only: loaded on first use


def logger_for(processor_id: str) -> logging.Logger:
    return logging.getLogger(f"agentd.processors.{processor_id}")


async def call_judge(
    model: str,
    system: str,
    prompt: str,
    schema: dict[str, Any],
    *,
    provider_options: dict[str, Any] | None,
    cancelled: asyncio.Event | None,
    processor_id: str,
    temperature: float | None = 0.0,
    failure_level: int = logging.WARNING,
) -> dict[str, Any] | None:
    """Asks the judge `model` and returns its JSON answer (an object matching
    `schema`), or None after logging one record (at `failure_level`) when the
    call failed or the answer is malformed. None without a record when the run
    was cancelled."""
    log = logger_for(processor_id)

    def failed(msg: str, *params: Any) -> None:
        log.log(failure_level, msg, *params)

    request = ModelRequest(
        prompt=[Message.system(system), Message.user(prompt)],
        settings=ModelSettings(temperature=temperature),
        provider_options=dict(provider_options or {}),
        structured_output=StructuredOutput(schema, name=f"{processor_id}-verdict"),
    )
    if cancelled is not None and cancelled.is_set():
        return None
    texts: list[str] = []
    obj: Any = None
    try:
        judge = resolve_model(model)
        stream = judge.stream(request)
        try:
            async for event in stream:
                if cancelled is not None and cancelled.is_set():
                    log.debug("judge call of %s abandoned: the run was cancelled", processor_id)
                    return None
                if isinstance(event, TextDelta):
                    texts.append(event.text)
                elif isinstance(event, ObjectPartial):
                    obj = event.object
                elif isinstance(event, Error):
                    raise ModelAPIError(event.message, status_code=event.status_code, provider_code=event.provider_code)
        finally:
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()
    except (ModelAPIError, AgentdError) as exc:
        raise_if_cancelling(exc)  # the judge's model turned the run's cancellation into its error
        failed("%s: the judge call to %s failed (%s); the content passes", processor_id, model, exc)
        return None
    except Exception as exc:  # a broken provider adapter must not break the guardrail
        raise_if_cancelling(exc)
        failed(
            "%s: the judge call to %s failed (%s: %s); the content passes", processor_id, model, type(exc).__name__, exc
        )
        return None
    if cancelled is not None and cancelled.is_set():
        return None
    answer: Any = obj
    raw = "".join(texts)
    if answer is None:
        try:
            answer = json.loads(strip_fences(raw))
        except ValueError:
            failed("%s: the judge's answer is not JSON (%d characters); the content passes", processor_id, len(raw))
            return None
    problem = schema_problem(schema, answer)
    if problem is not None or not isinstance(answer, dict):
        # The rule and the path only: the values may quote the content a guardrail protects.
        failed(
            "%s: the judge's answer does not match the schema (%s); the content passes",
            processor_id,
            problem or "/ fails 'type'",
        )
        return None
    return answer


# ---------------------------------------------------------------- option checks


def check_model(model: Any, *, required: bool, processor_id: str) -> str | None:
    if model is None or model == "":
        if required:
            raise ValueError(f"{processor_id}: model is required (a 'provider/model' string for the judge)")
        return None
    if not isinstance(model, str):
        raise ValueError(f"{processor_id}: model must be a 'provider/model' string")
    try:
        check_model_spec(model)
    except AgentdError as exc:
        raise ValueError(f"{processor_id}: model: {exc.message}") from None
    return model


def check_choice(name: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)} (got {value!r})")
    return str(value)


def check_threshold(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"threshold must be a number between 0 and 1 (got {value!r})")
    return float(value)


def check_names(name: str, value: Any, *, default: Sequence[str]) -> tuple[str, ...]:
    if value is None:
        return tuple(default)
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{name} must be a list of non-empty strings")
    if not value:
        raise ValueError(f"{name} must not be empty")
    return tuple(dict.fromkeys(value))


def check_options(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("provider_options must be an object")
    return dict(value)


def check_non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer (got {value!r})")
    return value


# ---------------------------------------------------------------- text helpers


def text_of(message: Message) -> str:
    """A message's text parts joined by a space and trimmed ('' when none)."""
    return " ".join(p.text for p in message.parts if isinstance(p, TextPart)).strip()


def with_text(message: Message, text: str) -> Message:
    """The message with one text part `text` (same id; non-text parts dropped)."""
    return dataclasses.replace(message, parts=[TextPart(text)])


def delta_text(part: Chunk) -> str | None:
    return part.payload.text if isinstance(part.payload, TextDelta) else None


def with_delta_text(part: Chunk, text: str) -> Chunk:
    payload = part.payload
    assert isinstance(payload, TextDelta)
    return dataclasses.replace(part, payload=dataclasses.replace(payload, text=text))


def window_text(stream_parts: Sequence[Chunk], window: int) -> str:
    """The text of the text-delta chunks among the last `window` stream parts."""
    return "".join(p.payload.text for p in stream_parts[-window:] if isinstance(p.payload, TextDelta))


def quoted(text: str) -> str:
    return f'"""\n{text}\n"""'
