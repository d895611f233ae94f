"""The guardrail base: the options every judge-based guardrail takes, the
strategy applied to what it flags, and the parts of a verdict they share.

The guardrails (moderation, prompt-injection-detector, pii-detector,
language-detector, system-prompt-scrubber) ask a judge model (judge.py) and
turn its answer into a `Finding`. Strategies common to them:

* `block`  -> `args.abort(message, metadata=detail)`: the run ends as a tripwire
  (the runner emits the tripwire chunk and calls `on_violation`);
* `warn`   -> one warning log record and one `on_violation` call, the content is
  unchanged. Each distinct violation message is reported once per request and
  side (input, output): an output guardrail sees both the stream and the final
  messages, and the same finding is not reported twice;
* `filter` -> the message (input, result) or the chunk (stream) is dropped;
* `redact` / `rewrite` / `translate` -> the message becomes one text part with
  the new text (non-text parts of that message are dropped).

What a guardrail filters or rewrites is logged on `agentd.processors.<id>`, as
Mastra's guardrails log it: `Filtered message <id>: <message>` and `Rewrote
message <id>: <message>` (and the same for a chunk) at INFO; a rewriting
strategy with nothing to put in place at WARNING (`No rewrite available, ...`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, TypedDict, Unpack

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Chunk
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import HookArgs, Processor, ProcessorViolation, TripWire
from agentd.runtime.processors.builtins.judge import (
    call_judge,
    check_choice,
    check_model,
    check_options,
    logger_for,
    text_of,
    with_delta_text,
    with_text,
)

Side = Literal["input", "output"]

#: Where a finding was made: in detail["phase"].
Phase = Literal["input", "output-stream", "output-step", "output-result"]


def side_of(phase: Phase) -> Side:
    return "input" if phase == "input" else "output"


@dataclass(frozen=True, slots=True)
class Finding:
    """Flagged content: the violation message and detail, and for a rewriting
    strategy the text to put in its place (None: there is nothing to put)."""

    message: str
    detail: dict[str, Any]
    replacement: str | None = None


# ---------------------------------------------------------------- verdict parts


def scored_items(key: str, names: Sequence[str]) -> dict[str, Any]:
    """The schema of a verdict's `[{<key>, score}] | null` list."""
    return {
        "type": ["array", "null"],
        "items": {
            "type": "object",
            "properties": {
                key: {"type": "string", "enum": list(names)},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
            },
            "required": [key, "score"],
        },
    }


def detection_items(types: Sequence[str] | None) -> dict[str, Any]:
    """The schema of a verdict's `[{type, value, confidence, start, end, redacted_value}] | null`
    list (`types`: the allowed types, None for any)."""
    kind: dict[str, Any] = {"type": "string"} if types is None else {"type": "string", "enum": list(types)}
    return {
        "type": ["array", "null"],
        "items": {
            "type": "object",
            "properties": {
                "type": kind,
                "value": {"type": "string"},
                "confidence": {"type": ["number", "null"]},
                "start": {"type": ["integer", "null"]},
                "end": {"type": ["integer", "null"]},
                "redacted_value": {"type": ["string", "null"]},
            },
            "required": ["type", "value"],
        },
    }


def verdict(properties: dict[str, Any], *, required: str, text: str | None = None) -> dict[str, Any]:
    """A verdict's JSON Schema: an object of `properties` that requires
    `required`, with the optional string field `text` (the rewrite a strategy asks for)."""
    if text is not None:
        properties = {**properties, text: {"type": ["string", "null"]}}
    return {"type": "object", "properties": properties, "required": [required]}


REASON: dict[str, Any] = {"type": ["string", "null"]}


def scored_verdict(field: str, key: str, names: Sequence[str], *, text: str | None = None) -> dict[str, Any]:
    """The verdict of a judge that scores `names`: `{<field>: [{<key>, score}], reason}`
    (and `text` when given), requiring `field`."""
    return verdict({field: scored_items(key, names), "reason": REASON}, required=field, text=text)


def top_scores(items: Sequence[Mapping[str, Any]] | None, key: str) -> dict[str, float]:
    """The highest score per `key` in a verdict's scored list."""
    scores: dict[str, float] = {}
    for item in items or []:
        name, score = item[key], float(item["score"])
        scores[name] = max(score, scores.get(name, 0.0))
    return scores


def at_or_above(scores: Mapping[str, float], threshold: float) -> list[str]:
    return [name for name, score in scores.items() if score >= threshold]


@dataclass(frozen=True, slots=True)
class Scored:
    """A verdict's scored list: each name's top score, those at or above the
    threshold (in the judge's order), and the judge's reason."""

    scores: dict[str, float]
    flagged: list[str]
    reason: Any

    @classmethod
    def of(cls, answer: Mapping[str, Any] | None, items: str, key: str, threshold: float) -> Scored | None:
        """None when there is no answer (the judge failed) or nothing reaches `threshold`."""
        if answer is None:
            return None
        scores = top_scores(answer.get(items), key)
        flagged = at_or_above(scores, threshold)
        return cls(scores, flagged, answer.get("reason")) if flagged else None

    def message(self, title: str, label: str, *, include_scores: bool) -> str:
        """`<title>. <label>: a, b[. Reason: ...][. Scores: a: 0.90, b: 0.70]`."""
        message = f"{title}. {label}: {', '.join(self.flagged)}"
        if self.reason:
            message += f". Reason: {self.reason}"
        if include_scores:
            message += ". Scores: " + ", ".join(f"{name}: {score:.2f}" for name, score in self.scores.items())
        return message


def locate(text: str, item: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Where a judge detection is in `text`: its start/end span when that holds
    its value, else every occurrence of the value."""
    value = str(item.get("value") or "")
    start, end = item.get("start"), item.get("end")
    if isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= len(text) and text[start:end] == value:
        return [(start, end)]
    spans: list[tuple[int, int]] = []
    at = text.find(value) if value else -1
    while at != -1:
        spans.append((at, at + len(value)))
        at = text.find(value, at + len(value))
    return spans


# ---------------------------------------------------------------- the base


class GuardrailOptions(TypedDict, total=False):
    """The options every guardrail takes (each declares its own besides)."""

    #: The judge, a "provider/model" string.
    model: str | None
    strategy: str
    #: The judge's system prompt, in place of the guardrail's own.
    instructions: str | None
    #: Passed to the judge call.
    provider_options: dict[str, Any] | None


class Guardrail(Processor):
    """Strategy plumbing shared by the guardrails."""

    #: The strategies a guardrail offers, and the one it uses unless told.
    strategies: ClassVar[tuple[str, ...]] = ("block", "warn")
    default_strategy: ClassVar[str] = "block"
    #: False: the judge is optional (deterministic checks run without it).
    model_required: ClassVar[bool] = True
    #: A rewriting strategy with nothing to put in place: keep the message (else drop it).
    keeps_unreplaced: ClassVar[bool] = True

    def __init__(self, **options: Unpack[GuardrailOptions]) -> None:
        unknown = sorted(set(options) - set(GuardrailOptions.__annotations__))
        if unknown:
            raise TypeError(f"{type(self).__name__} got unexpected keyword argument(s) {', '.join(unknown)}")
        self.id = type(self).id
        self.model = check_model(options.get("model"), required=self.model_required, processor_id=self.id)
        self.strategy = check_choice("strategy", options.get("strategy", self.default_strategy), self.strategies)
        instructions = options.get("instructions")
        if instructions is not None and not isinstance(instructions, str):
            raise ValueError("instructions must be a string")
        #: The caller's instructions; None: the guardrail's default.
        self.custom_instructions = instructions or None
        self.provider_options: dict[str, Any] | None = check_options(options.get("provider_options"))

    @property
    def log(self) -> logging.Logger:
        return logger_for(self.id)

    async def ask(
        self,
        system: str,
        prompt: str,
        schema: dict[str, Any],
        args: HookArgs,
        *,
        temperature: float | None = 0.0,
    ) -> dict[str, Any] | None:
        """`call_judge` with this processor's model and options. The first judge
        failure of a request is a warning, later ones are debug records: a
        failing judge on a stream logs once, not once per chunk."""
        failed_before = bool(args.state.get("judge_failed"))
        answer = await call_judge(
            self.model or "",
            system,
            prompt,
            schema,
            provider_options=self.provider_options,
            cancelled=args.cancelled,
            processor_id=self.id,
            temperature=temperature,
            failure_level=logging.DEBUG if failed_before else logging.WARNING,
        )
        if answer is None and not (args.cancelled is not None and args.cancelled.is_set()):
            args.state["judge_failed"] = True
        return answer

    def warn(self, args: HookArgs, phase: Phase, message: str, detail: dict[str, Any]) -> None:
        """One warning record and one on_violation call per distinct message and side."""
        reported: set[tuple[str, str]] = args.state.setdefault("warned", set())
        key = (side_of(phase), message)
        if key in reported:
            return
        reported.add(key)
        self.log.warning("%s (%s)", message, phase)
        args.report(ProcessorViolation(self.id, message, detail))

    # ------------------------------------------------------------ strategies

    def _flagged(self, args: HookArgs, phase: Phase, finding: Finding) -> bool:
        """Blocks (raises) or warns; True when the content stays as it is."""
        detail = {**finding.detail, "phase": phase}
        if self.strategy == "block":
            args.abort(finding.message, metadata=detail)
        if self.strategy == "warn":
            self.warn(args, phase, finding.message, detail)
            return True
        return False

    def on_chunk(self, args: HookArgs, part: Chunk, finding: Finding | None) -> Chunk | None:
        """The strategy for a text-delta chunk: the chunk, its rewrite, or None (dropped)."""
        if finding is None or self._flagged(args, "output-stream", finding):
            return part
        if self.strategy == "filter" or finding.replacement is None:
            self.log.info("Filtered chunk: %s", finding.message)
            return None
        self.log.info("Rewrote chunk: %s", finding.message)
        return with_delta_text(part, finding.replacement)

    def on_message(self, args: HookArgs, phase: Phase, message: Message, finding: Finding) -> Message | None:
        """The strategy for a message: the message, its rewrite, or None (dropped)."""
        if self._flagged(args, phase, finding):
            return message
        if self.strategy != "filter" and finding.replacement is not None:
            self.log.info("Rewrote message %s: %s", message.id, finding.message)
            return with_text(message, finding.replacement)
        if self.strategy != "filter" and self.keeps_unreplaced:
            self.log.warning("No rewrite available, keeping message %s: %s", message.id, finding.message)
            return message
        if self.strategy != "filter":
            self.log.warning("No rewrite available, filtering message %s: %s", message.id, finding.message)
        else:
            self.log.info("Filtered message %s: %s", message.id, finding.message)
        return None

    async def guard_messages(
        self,
        args: HookArgs,
        messages: list[Message],
        phase: Phase,
        find: Callable[[str], Awaitable[Finding | None]],
        *,
        only_last: bool = False,
    ) -> list[Message] | None:
        """Applies the strategy to each message whose text `find` flags (in the
        result: assistant messages only; `only_last`: the last message only).
        The new list, or None when nothing changed."""
        out: list[Message] = []
        changed = False
        for index, message in enumerate(messages):
            text = text_of(message)
            skipped = (phase in ("output-step", "output-result") and message.role != "assistant") or (
                only_last and index != len(messages) - 1
            )
            finding = None if skipped or not text else await find(text)
            kept = message if finding is None else self.on_message(args, phase, message, finding)
            if kept is not None:
                out.append(kept)
            changed = changed or kept is not message
        return out if changed else None

    @contextmanager
    def aborting_on_error(self, args: HookArgs, what: str) -> Iterator[None]:
        """An unexpected error (not the judge's: that fails open) aborts the run
        as `<what> failed: <error>`."""
        try:
            yield
        except TripWire:
            raise
        except Exception as exc:
            raise_if_cancelling(exc)  # a cancellation in disguise ends the run cancelled, not tripped
            self.log.exception("%s failed", what)
            args.abort(f"{what} failed: {exc}", metadata={"phase": "input", "error": str(exc)})
