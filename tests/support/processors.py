"""Small processors tests give their agents."""

from __future__ import annotations

from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.processors.base import Processor, ProcessOutputStreamArgs


class Shout(Processor):
    """Upper-cases the reply as it streams."""

    id = "shout"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        payload = args.part.payload
        if isinstance(payload, TextDelta):
            payload.text = payload.text.upper()
        return args.part
