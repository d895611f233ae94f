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

from typing import Any, Unpack

from agentd.runtime.chunks import Chunk
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import HookArgs, ProcessInputArgs, ProcessOutputResultArgs, ProcessOutputStreamArgs
from agentd.runtime.processors.builtins.guardrail import (
    Finding,
    Guardrail,
    GuardrailOptions,
    Scored,
    scored_verdict,
)
from agentd.runtime.processors.builtins.judge import (
    check_names,
    check_non_negative_int,
    check_threshold,
    delta_text,
    quoted,
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
    return scored_verdict("category_scores", "category", categories)


class ModerationProcessor(Guardrail):
    id = "moderation"
    name = "Moderation"
    strategies = STRATEGIES

    def __init__(
        self,
        *,
        categories: list[str] | None = None,
        threshold: float = 0.5,
        include_scores: bool = False,
        chunk_window: int = 0,
        **options: Unpack[GuardrailOptions],
    ) -> None:
        super().__init__(**options)
        self.categories = check_names("categories", categories, default=DEFAULT_CATEGORIES)
        self.threshold = check_threshold(threshold)
        self.include_scores = bool(include_scores)
        self.chunk_window = check_non_negative_int("chunk_window", chunk_window)
        self.instructions = self.custom_instructions or self._default_instructions()
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

    async def _judge(self, text: str, args: HookArgs, *, window: int = 0) -> Finding | None:
        """The finding when the judge flags `text`; None when clean or the judge failed."""
        prompt = "Evaluate the following content for moderation"
        if window:
            prompt += f" (a streaming response: only the last {window} chunks are visible)"
        answer = await self.ask(self.instructions, f"{prompt}:\n\n{quoted(text)}", self.schema, args)
        found = Scored.of(answer, "category_scores", "category", self.threshold)
        if found is None:
            return None
        message = found.message("Content flagged for moderation", "Categories", include_scores=self.include_scores)
        detail = {
            "categories": found.flagged,
            "scores": found.scores,
            "reason": found.reason,
            "threshold": self.threshold,
        }
        return Finding(message, detail)

    # ------------------------------------------------------------ hooks

    async def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        with self.aborting_on_error(args, "Moderation"):
            return await self.guard_messages(args, args.messages, "input", lambda text: self._judge(text, args))

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        text = delta_text(args.part)
        if text is not None and self.chunk_window:
            text = window_text(args.stream_parts, self.chunk_window)
        if text is None or not text.strip():
            return args.part
        return self.on_chunk(args, args.part, await self._judge(text, args, window=self.chunk_window))

    async def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message] | None:
        return await self.guard_messages(args, args.messages, "output-result", lambda text: self._judge(text, args))
