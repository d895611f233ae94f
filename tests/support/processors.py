"""Small processors tests give their agents."""

from __future__ import annotations

import asyncio

from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.processors.base import ProcessInputArgs, Processor, ProcessOutputStreamArgs


class Shout(Processor):
    """Upper-cases the reply as it streams."""

    id = "shout"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        payload = args.part.payload
        if isinstance(payload, TextDelta):
            payload.text = payload.text.upper()
        return args.part


class HeldAfterRun(Processor):
    """Work for after each run (on_finish) that waits until `release` is set
    (for ever, unless a test sets it). `entered` lists the runs whose work
    began, `finished` those whose work ended; `began()` waits for the first."""

    id = "held-after-run"

    def __init__(self) -> None:
        self.entered: list[str] = []
        self.finished: list[str] = []
        self.release = asyncio.Event()
        self._began = asyncio.Event()

    def process_input(self, args: ProcessInputArgs) -> None:
        assert args.on_finish is not None
        run_id = args.run_id

        async def after() -> None:
            self.entered.append(run_id)
            self._began.set()
            await self.release.wait()
            self.finished.append(run_id)

        args.on_finish(after)

    async def began(self) -> None:
        await asyncio.wait_for(self._began.wait(), 10)
