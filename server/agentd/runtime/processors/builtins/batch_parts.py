"""BatchParts ("batch-parts"): streams text in fewer, larger chunks.

`text-delta` chunks are held back and emitted together once `batch_size` of them
are queued, or on the next chunk after `max_wait_time` ms have passed since the
batch started (there is no timer: the check is made when a chunk arrives). Queued
deltas of one text block are combined into a single `text-delta` that keeps the
real ids (the first delta's envelope and text id).

A non-text chunk flushes the batch when `emit_on_non_text` is on: the batch is
returned and the non-text chunk is queued right after it (`emit_after`), so the
order is preserved. With `emit_on_non_text` off, non-text chunks are queued in the
batch with the text, in order. A terminal chunk (`finish`, `step-finish`, `error`,
`abort`, `tripwire`) always flushes, so a trailing partial batch is never lost.
`flush(state)` hands back whatever is still queued, for a caller that ends the
stream itself.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.processors.base import Processor, ProcessOutputStreamArgs

#: Chunks that end a step or the stream: they always flush the batch.
FLUSH_TYPES = frozenset({"finish", "step-finish", "error", "abort", "tripwire"})


class BatchPartsProcessor(Processor):
    id = "batch-parts"
    name = "Batch Parts"

    def __init__(
        self, *, batch_size: int = 5, max_wait_time: int | float | None = None, emit_on_non_text: bool = True
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        if max_wait_time is not None and (
            isinstance(max_wait_time, bool) or not isinstance(max_wait_time, int | float) or max_wait_time < 0
        ):
            raise ValueError(f"max_wait_time must be a non-negative number of milliseconds, not {max_wait_time!r}")
        if not isinstance(emit_on_non_text, bool):
            raise ValueError("emit_on_non_text must be a boolean")
        self.id = type(self).id
        self.batch_size = batch_size
        self.max_wait_time = max_wait_time
        self.emit_on_non_text = emit_on_non_text

    # ------------------------------------------------------------ state

    @staticmethod
    def _batch(state: dict[str, Any]) -> list[Chunk]:
        batch: list[Chunk] = state.setdefault("batch", [])
        return batch

    def _timed_out(self, state: dict[str, Any]) -> bool:
        deadline = state.get("deadline")
        return deadline is not None and time.monotonic() >= deadline

    def flush(self, state: dict[str, Any]) -> list[Chunk]:
        """Empties the batch: the queued chunks, consecutive deltas of one text
        block combined into one (also chunks that could not be queued for
        re-emission earlier). Usually zero or one chunk."""
        batch = self._batch(state)
        undelivered: list[Chunk] = state.pop("undelivered", [])
        state["batch"] = []
        state["deadline"] = None
        return [*undelivered, *_combine(batch)]

    # ------------------------------------------------------------ the hook

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        state = args.state
        part = args.part
        reemitted: list[Chunk] = state.setdefault("reemitted", [])
        for index, queued in enumerate(reemitted):
            if queued is part or _same(queued, part):
                del reemitted[index]
                return part  # a chunk this processor queued with emit_after: already handled
        batch = self._batch(state)
        is_text = part.type == "text-delta"
        terminal = part.type in FLUSH_TYPES
        if not is_text and (terminal or self.emit_on_non_text):
            if not batch:
                return part
            return self._deliver(args, [*self.flush(state), part])
        batch.append(part)
        if len(batch) >= self.batch_size or self._timed_out(state):
            return self._deliver(args, self.flush(state))
        if self.max_wait_time is not None and state.get("deadline") is None:
            state["deadline"] = time.monotonic() + self.max_wait_time / 1000
        return None

    def _deliver(self, args: ProcessOutputStreamArgs, chunks: list[Chunk]) -> Chunk | None:
        """Returns the first chunk; queues the others, in order, to follow it."""
        if not chunks:
            return None
        first, rest = chunks[0], chunks[1:]
        if rest and args.emit_after is None:
            # No way to emit more than one chunk now: hand the rest to the next flush.
            args.state.setdefault("undelivered", []).extend(rest)
            return first
        reemitted: list[Chunk] = args.state.setdefault("reemitted", [])
        for chunk in rest:
            reemitted.append(chunk)
            assert args.emit_after is not None
            args.emit_after(chunk)
        return first


#: The reference name of the same processor.
BatchParts = BatchPartsProcessor


def _same(a: Chunk, b: Chunk) -> bool:
    """The same chunk after an earlier processor rebuilt its envelope."""
    return a.run_id == b.run_id and a.seq == b.seq and a.type == b.type and a.payload == b.payload


def _combine(batch: list[Chunk]) -> list[Chunk]:
    out: list[Chunk] = []
    run: list[Chunk] = []

    def close() -> None:
        if len(run) == 1:
            out.append(run[0])
        elif run:
            first = run[0]
            payload = first.payload
            assert isinstance(payload, TextDelta)
            text = "".join(c.payload.text for c in run if isinstance(c.payload, TextDelta))
            out.append(dataclasses.replace(first, payload=dataclasses.replace(payload, text=text)))
        run.clear()

    for chunk in batch:
        payload = chunk.payload
        if isinstance(payload, TextDelta) and run:
            head = run[0].payload
            assert isinstance(head, TextDelta)
            if head.id == payload.id and run[0].run_id == chunk.run_id:
                run.append(chunk)
                continue
        close()
        if isinstance(payload, TextDelta):
            run.append(chunk)
        else:
            out.append(chunk)
    close()
    return out
