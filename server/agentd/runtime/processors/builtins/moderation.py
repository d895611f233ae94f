"""ModerationProcessor ("moderation"): an LLM judge scores content against moderation categories.

Input: every input message with text is judged. Output: every text-delta chunk
of the stream (the delta alone, or with `chunk_window` N the text of the last N
stream parts) and every assistant message of the final result.

The judge answers `{"category_scores": [{"category", "score"}] | null, "reason": str | null}`
at temperature 0. Content is flagged when a category's score reaches
`threshold`; the flagged categories are those at or above it. Strategies:
`block` (tripwire; detail: categories, scores, reason), `warn` (one warning and
one on_violation, content unchanged), `filter` (message or chunk dropped).
A failed judge call or a malformed answer lets the content through (one warning).

Options: model (required), categories, threshold 0.5, strategy block, instructions,
include_scores false (scores in the message too), chunk_window 0, provider_options.
"""

from __future__ import annotations

from typing import Any

from agentd.runtime.chunks import Chunk
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import (
    HookArgs,
    ProcessInputArgs,
    ProcessOutputResultArgs,
    ProcessOutputStreamArgs,
    TripWire,
)
from agentd.runtime.processors.builtins.judge import (
    Guardrail,
    Phase,
    check_choice,
    check_model,
    check_names,
    check_non_negative_int,
    check_options,
    check_threshold,
    delta_text,
    quoted,
    text_of,
    window_text,
)

DEFAULT_CATEGORIES = (
    "hate",
    "hate/threatening",
    "harassment",
    "harassment/threatening",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)
STRATEGIES = ("block", "warn", "filter")


def verdict_schema(categories: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "category_scores": {
                "type": ["array", "null"],
                "items": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string", "enum": list(categories)},
                        "score": {"type": "number", "minimum": 0, "maximum": 1},
                    },
                    "required": ["category", "score"],
                },
            },
            "reason": {"type": ["string", "null"]},
        },
        "required": ["category_scores"],
    }


def _score(value: float) -> str:
    return f"{value:.2f}"


class ModerationProcessor(Guardrail):
    id = "moderation"
    name = "Moderation"

    def __init__(
        self,
        *,
        model: str | None = None,
        categories: list[str] | None = None,
        threshold: float = 0.5,
        strategy: str = "block",
        instructions: str | None = None,
        include_scores: bool = False,
        chunk_window: int = 0,
        provider_options: dict[str, Any] | None = None,
    ) -> None:
        self.id = type(self).id
        self.model = check_model(model, required=True, processor_id=self.id)
        self.categories = check_names("categories", categories, default=DEFAULT_CATEGORIES)
        self.threshold = check_threshold(threshold)
        self.strategy = check_choice("strategy", strategy, STRATEGIES)
        if instructions is not None and not isinstance(instructions, str):
            raise ValueError("instructions must be a string")
        self.instructions = instructions or self._default_instructions()
        self.include_scores = bool(include_scores)
        self.chunk_window = check_non_negative_int("chunk_window", chunk_window)
        self.provider_options = check_options(provider_options)
        self.schema = verdict_schema(self.categories)

    def _default_instructions(self) -> str:
        return (
            "You are a content moderation specialist. Evaluate content against these categories: "
            f"{', '.join(self.categories)}.\n"
            "List only the categories that are actually triggered, each with a score from 0 (absent) to 1 "
            "(certain); return an empty list when the content is clean. Be reasonable about context, intent, "
            "and educational, news or creative use. Give a short reason.\n"
            'Answer with JSON only: {"category_scores": [{"category": "...", "score": 0.0}], "reason": "..."}.'
        )

    # ------------------------------------------------------------ judging

    async def _judge(self, text: str, args: HookArgs, *, window: int = 0) -> tuple[str, dict[str, Any]] | None:
        """(message, detail) when the judge flags `text`; None when clean or the judge failed."""
        prompt = "Evaluate the following content for moderation"
        if window:
            prompt += f" (a streaming response: only the last {window} chunks are visible)"
        answer = await self.ask(self.model or "", self.instructions, f"{prompt}:\n\n{quoted(text)}", self.schema, args)
        if answer is None:
            return None
        scores: dict[str, float] = {}
        for item in answer.get("category_scores") or []:
            category, score = item["category"], float(item["score"])
            scores[category] = max(score, scores.get(category, 0.0))
        flagged = [c for c, s in scores.items() if s >= self.threshold]
        if not flagged:
            return None
        reason = answer.get("reason")
        message = f"Content flagged for moderation. Categories: {', '.join(flagged)}"
        if reason:
            message += f". Reason: {reason}"
        if self.include_scores:
            message += ". Scores: " + ", ".join(f"{c}: {_score(s)}" for c, s in scores.items())
        detail: dict[str, Any] = {
            "categories": flagged,
            "scores": scores,
            "reason": reason,
            "threshold": self.threshold,
        }
        return message, detail

    async def _messages(self, messages: list[Message], args: HookArgs, phase: Phase) -> list[Message] | None:
        kept: list[Message] = []
        dropped = False
        for message in messages:
            text = text_of(message)
            if not text or (phase == "output-result" and message.role != "assistant"):
                kept.append(message)
                continue
            verdict = await self._judge(text, args)
            if verdict is None:
                kept.append(message)
                continue
            reason, detail = verdict
            detail["phase"] = phase
            if self.strategy == "block":
                args.abort(reason, metadata=detail)
            if self.strategy == "warn":
                self.warn(args, phase, reason, detail)
                kept.append(message)
            else:  # filter
                self.log.debug("%s; message %s filtered", reason, message.id)
                dropped = True
        return kept if dropped else None

    # ------------------------------------------------------------ hooks

    async def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        try:
            return await self._messages(args.messages, args, "input")
        except TripWire:
            raise
        except Exception as exc:
            self.log.exception("moderation of the input failed")
            args.abort(f"Moderation failed: {exc}", metadata={"phase": "input", "error": str(exc)})

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        part = args.part
        text = delta_text(part)
        if text is None:
            return part
        if self.chunk_window:
            text = window_text(args.stream_parts, self.chunk_window)
        if not text.strip():
            return part
        verdict = await self._judge(text, args, window=self.chunk_window)
        if verdict is None:
            return part
        reason, detail = verdict
        detail["phase"] = "output-stream"
        if self.strategy == "block":
            args.abort(reason, metadata=detail)
        if self.strategy == "warn":
            self.warn(args, "output-stream", reason, detail)
            return part
        self.log.debug("%s; chunk filtered", reason)
        return None

    async def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message] | None:
        return await self._messages(args.messages, args, "output-result")
