"""The embedded `local/...` model: deterministic, offline, for tests and demos.

`local/echo` replies with the last user message, one word per delta.
A script in the call's provider options makes any `local/` model follow it,
one script step per model call (the last step repeats):

    provider_options = {"local": {"delayMs": 0, "script": [
        {"reasoning": "...", "text": "...", "deltas": ["a", "b"],
         "toolCalls": [{"id": "c1", "name": "search", "args": {"q": "x"}}],
         "object": {...}, "finishReason": "stop",
         "usage": {"inputTokens": 3, "outputTokens": 2},
         "error": {"message": "...", "status": 500, "code": "server_error",
                   "retryable": true, "afterDeltas": 0},
         "delayMs": 0},
    ]}}

A step key not listed here is refused (INVALID_ARGUMENT naming it), so a typo
cannot pass for a step that does nothing.

`{"local": {"scripts": {"scripted": [...]}}}` scripts one local model only
(the others echo), e.g. the first model of a fallback chain.

Pacing: with `delayMs` > 0 the model sleeps that long before each delta. With
no delay it is a CPU-bound producer and yields to the event loop as one
should: every `YIELD_EVERY` deltas or once `YIELD_AFTER` seconds have passed
since it last yielded, whichever comes first (it looks every few deltas), so
readers, aborts and other runs get in during a long reply while a short one
costs no loop turn per delta. (A JavaScript mock model's chunks cost a
microtask each, which never goes back to the event loop; Python has no
microtask queue, and each `sleep(0)` is a whole loop turn with a poll.) A test
that needs the run to pause between deltas scripts a delay.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterator
from typing import Any, cast

from agentd.runtime.chunks import (
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    TextDelta,
    TextEnd,
    TextStart,
    Usage,
)
from agentd.runtime.errors import FieldViolation, InvalidArgument
from agentd.runtime.messages import Message, SignalPart, TextPart, new_id
from agentd.runtime.models.base import BatchedEvents, EventBatch, ModelAPIError, ModelEvent, ModelFinish, ModelRequest
from agentd.runtime.models.common import ModelIdentity, whole_tool_call

_WORDS = re.compile(r"\s*\S+\s*|\s+")
_FINISH_REASONS = {"stop", "length", "content-filter", "tool-calls", "error", "other", "unknown"}
MODEL_IDS = frozenset({"echo", "scripted"})
#: What a script step may say (see the module docstring).
STEP_KEYS = frozenset(
    {"reasoning", "text", "deltas", "toolCalls", "object", "finishReason", "usage", "error", "delayMs"}
)
#: With no delay, the model yields to the loop every this many deltas...
YIELD_EVERY = 32
#: ...or once this many seconds have passed since it last did, whichever first.
YIELD_AFTER = 0.001
#: It looks whether to yield every this many deltas (YIELD_EVERY is a multiple of it).
_CHECK_EVERY = 8


def split_words(text: str) -> list[str]:
    """Words with their surrounding whitespace, so the deltas join back to `text`."""
    return _WORDS.findall(text)


def _word_count(messages: list[Message]) -> int:
    total = 0
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart):
                total += len(part.text.split())
    return total


class LocalModel(ModelIdentity):
    PROVIDER = "local"
    #: Calls so far (one instance per run: the script step is the call index);
    #: the class's 0 until the first call sets the instance's own.
    _calls = 0

    def stream(self, request: ModelRequest) -> BatchedEvents:
        options = request.provider_options.get("local") or {}
        if not isinstance(options, dict):
            raise InvalidArgument.field("options.provider_options.local", "must be an object")
        # `scripts` keys a script by local model id (e.g. to script one model of a
        # fallback chain); `script` applies to every local model.
        scripts = options.get("scripts")
        script = (
            scripts.get(self._model_id)
            if isinstance(scripts, dict) and self._model_id in scripts
            else (options.get("script"))
        )
        call = self._calls
        self._calls += 1
        if script is not None:
            if not isinstance(script, list) or not script or not all(isinstance(s, dict) for s in script):
                raise InvalidArgument.field(
                    "options.provider_options.local.script", "must be a non-empty list of step objects"
                )
            _check_steps(script)
            step = cast(dict[str, Any], script[min(call, len(script) - 1)])
        elif self._model_id == "scripted":
            raise InvalidArgument.field("options.provider_options.local.script", "local/scripted needs a script")
        else:
            step = {"text": _last_user_text(request.prompt)}
        delay = float(step.get("delayMs", options.get("delayMs")) or 0) / 1000.0
        return BatchedEvents(self._run_step(step, request, delay))

    def _run_step(self, step: dict[str, Any], request: ModelRequest, delay: float) -> Iterator[EventBatch]:
        """The step's events as BatchedEvents reads them: what is ready before
        a pause in one list, then the pause."""
        batch: list[ModelEvent] = []
        try:
            error = step.get("error")
            failing = isinstance(error, dict)  # a scripted error: checked before each delta
            fail_after = int(error.get("afterDeltas", 0)) if isinstance(error, dict) else -1
            emitted = 0
            # Deltas left before the pacer is asked (see _Pacer); it is made on
            # that first question, so a short reply without a delay makes none.
            every = left = 1 if delay > 0 else _CHECK_EVERY
            pacer: _Pacer | None = None
            began = time.monotonic()
            if failing:
                _check_error(error, emitted, fail_after)
            text = step.get("text")
            if "object" in step:
                text = json.dumps(step["object"], separators=(",", ":"))
            deltas = step.get("deltas")
            pieces = [str(d) for d in deltas] if isinstance(deltas, list) else split_words(str(text or ""))
            # The reasoning block, then the text block: (start, delta, end, id, pieces, checked for the error).
            blocks: list[tuple[Any, Any, Any, str, list[str], bool]] = []
            reasoning = step.get("reasoning")
            if reasoning:
                words = split_words(str(reasoning))
                blocks.append((ReasoningStart, ReasoningDelta, ReasoningEnd, new_id("rs_"), words, False))
            if pieces:
                blocks.append((TextStart, TextDelta, TextEnd, new_id("txt_"), pieces, failing))
            for start, delta, end, block_id, block, checked in blocks:
                batch.append(start(block_id))
                for piece in block:
                    left -= 1
                    if left <= 0:
                        left = every
                        if pacer is None:
                            pacer = _Pacer(delay, began)
                        if pacer.pause_due():
                            if batch:
                                yield batch
                                batch = []
                            yield pacer.pause()
                    if checked:
                        _check_error(error, emitted, fail_after)
                    batch.append(delta(block_id, piece))
                    emitted += 1
                batch.append(end(block_id))
            if failing:
                _check_error(error, emitted, fail_after)

            calls = step.get("toolCalls") or []
            for i, raw in enumerate(calls):
                call_id = str(raw.get("id") or f"call_{i}")
                name = str(raw["name"])
                batch.extend(whole_tool_call(call_id, name, raw.get("args", {})))

            reason = str(step.get("finishReason") or ("tool-calls" if calls else "stop"))
            if reason not in _FINISH_REASONS:
                raise InvalidArgument.field(
                    "options.provider_options.local.script.finishReason", f"unknown finish reason {reason!r}"
                )
            raw_usage = step.get("usage") or {}
            input_tokens = int(raw_usage["inputTokens"]) if "inputTokens" in raw_usage else _word_count(request.prompt)
            output_tokens = int(raw_usage.get("outputTokens", max(emitted, len(calls))))
            usage = Usage(  # input, output, total, reasoning, cached input
                input_tokens,
                output_tokens,
                int(raw_usage.get("totalTokens", input_tokens + output_tokens)),
                raw_usage.get("reasoningTokens"),
                raw_usage.get("cachedInputTokens"),
            )
            batch.append(ModelFinish(cast(FinishReason, reason), usage, reason))
        except Exception:  # what was ready goes out before the failure, as it would one by one
            if batch:
                yield batch
            raise
        yield batch


class _Pacer:
    """When the model pauses before a delta (see the module docstring). The
    model counts deltas down and asks `pause_due` when the count reaches 0:
    before every delta with a delay, every `_CHECK_EVERY` deltas without one
    (so a delta costs no call, and the clock is read now and then)."""

    __slots__ = ("_at", "_delay", "_since")

    def __init__(self, delay: float, began: float) -> None:
        self._delay = delay
        self._since = 0  # deltas since the last pause, as of the last check
        self._at = began  # when it last paused (or the reply began)

    def pause_due(self) -> bool:
        if self._delay > 0:
            return True
        self._since += _CHECK_EVERY
        return self._since >= YIELD_EVERY or time.monotonic() - self._at >= YIELD_AFTER

    async def pause(self) -> None:
        await asyncio.sleep(self._delay)
        self._since, self._at = 0, time.monotonic()


def _check_error(error: Any, emitted: int, fail_after: int) -> None:
    """A scripted error, raised once `emitted` deltas went out (`fail_after`)."""
    if emitted >= fail_after:
        raise ModelAPIError(
            str(error.get("message", "scripted provider error")),
            status_code=int(error["status"]) if error.get("status") is not None else None,
            provider_code=error.get("code"),
            retryable=bool(error.get("retryable", False)),
        )


def _check_steps(script: list[dict[str, Any]]) -> None:
    """Refuses a step key the model does not know, naming it."""
    unknown = sorted({str(key) for step in script for key in step} - STEP_KEYS)
    if unknown:
        known = ", ".join(sorted(STEP_KEYS))
        raise InvalidArgument.fields(
            [
                FieldViolation(f"options.provider_options.local.script.{key}", f"unknown script key (known: {known})")
                for key in unknown
            ]
        )


def _last_user_text(prompt: list[Message]) -> str:
    """The last user turn the caller wrote: system reminders, though sent as
    user turns, are injected context and never echoed."""
    for message in reversed(prompt):
        role = message.role
        if role == "user":
            text = message.text
            if not text.startswith("<system-reminder"):
                return text
        elif role == "signal":
            for part in message.parts:
                if isinstance(part, SignalPart):
                    return str(getattr(part.signal, "text", "") or "")
    return ""
