"""The output-stream lane, prepared once per run.

process_output_stream runs per chunk, per processor, so everything that is the
same for every chunk is worked out when a processor is first seen in a run: the
bound hook, whether it is a coroutine function, its `stream_parts` list and the
args fields that never change (its state, abort, the run's context). A chunk
then costs one call per processor and one args object (a fresh one per call,
as in the reference: a processor may keep what it was given).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentd.runtime.chunks import Chunk
from agentd.runtime.processors.base import ProcessOutputStreamArgs
from agentd.runtime.processors.message_list import MessageList

_new = object.__new__


@dataclass(slots=True)
class StreamStep:
    """One processor's output-stream hook as a run calls it."""

    processor: Any
    #: The bound `process_output_stream`.
    hook: Callable[[ProcessOutputStreamArgs], Any]
    #: True when the hook is a coroutine function: its result is always awaited.
    is_async: bool
    #: Every chunk the processor was given so far (the runner's own list).
    seen: list[Chunk]
    #: The args fields that are the same for every chunk of the run.
    fixed: dict[str, Any]

    @classmethod
    def prepare(cls, processor: Any, seen: list[Chunk], common: dict[str, Any]) -> StreamStep:
        hook = processor.process_output_stream
        # Built once through the dataclass itself, so every field (and any
        # default a later field brings) is there; each call copies it.
        prototype = ProcessOutputStreamArgs(part=None, stream_parts=seen, **common)  # type: ignore[arg-type]
        return cls(processor, hook, inspect.iscoroutinefunction(hook), seen, vars(prototype))

    def args(
        self, part: Chunk, emit_after: Callable[[Chunk], None], message_list: MessageList | None, retry_count: int
    ) -> ProcessOutputStreamArgs:
        """A fresh args object for one call: the prototype's fields with this
        chunk's. (No __init__: HookArgs has no __post_init__ to skip.)"""
        fields = self.fixed.copy()
        fields["part"] = part
        fields["emit_after"] = emit_after
        fields["message_list"] = message_list
        fields["retry_count"] = retry_count
        args: ProcessOutputStreamArgs = _new(ProcessOutputStreamArgs)
        args.__dict__ = fields
        return args
