"""Processors the conformance agents use (loaded with --app tests.conformance.app)."""

from __future__ import annotations

from agentd.runtime import Message
from agentd.runtime.processors.base import ProcessInputArgs, Processor, ProcessOutputResultArgs
from agentd.runtime.processors.factory import from_options


class Guard(Processor):
    """Trips on a word in the input."""

    id = "guard"

    def __init__(self, word: str = "forbidden") -> None:
        self.word = word

    def process_input(self, args: ProcessInputArgs) -> None:
        if any(self.word in m.text for m in args.messages):
            args.abort(f"input mentions {self.word}", metadata={"word": self.word})


class ModerationNotes(Processor):
    """Emits a data-moderation-update chunk for every answer."""

    id = "moderation-notes"

    async def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message]:
        assert args.writer is not None
        await args.writer.custom("data-moderation-update", {"moderatedText": args.result.text, "reason": "ok"})
        return args.messages


processors = {"guard": from_options(Guard), "moderation-notes": from_options(ModerationNotes)}
