"""Conversation memory: which thread a run reads and writes, as framework processors.

Memory contributes three processors around the configured lanes: one that
loads the thread's recent history before the user's input processors, one
that saves the run's new messages after the user's output processors (so an
output guardrail's abort leaves nothing saved), and an error processor that
trims recalled history when the model reports a context overflow.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from typing import Any

from agentd.runtime.agent_definition import MEMORY_THREAD_KEY
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.lanes import FrameworkProcessors
from agentd.runtime.messages import Message, SignalPart, ToolCallPart, ToolResultPart
from agentd.runtime.processors.base import (
    APIErrorResult,
    HookArgs,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    Processor,
    ProcessOutputResultArgs,
)
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.storage import Storage, Thread

log = logging.getLogger("agentd.memory")

_OVERFLOW = re.compile(r"context.{0,20}(length|window|limit)|too many tokens|maximum context|prompt is too long", re.I)


@dataclass
class MemoryThread:
    """The thread a run is bound to, prepared before the run starts."""

    thread: Thread
    #: False for a thread this run creates: there is no history to load.
    existed: bool


class Memory:
    """Threads and messages in a Storage. `last_messages`: how many earlier
    messages a run recalls (signal rows do not count against it)."""

    def __init__(self, storage: Storage, *, last_messages: int = 10) -> None:
        if last_messages < 0:
            raise ValueError("last_messages must not be negative")
        self.storage = storage
        self.last_messages = last_messages

    def processors(self, request_context: dict[str, Any]) -> FrameworkProcessors:
        return FrameworkProcessors(
            input=[_LoadHistory(self)], output=[_SaveMessages(self)], error=[ContextOverflowTrim()]
        )

    async def prepare(
        self, resource_id: str, thread_id: str, *, title: str | None = None, metadata: dict[str, Any] | None = None
    ) -> MemoryThread:
        """The run's thread: an existing one (its metadata replaced when the call
        brings different metadata; its title never changed here), or a new one,
        stored now, so GetThread finds the thread while its first run is going."""
        thread = await self.storage.get_thread(thread_id)
        if thread is None:
            created = Thread(thread_id, resource_id, title or "", dict(metadata or {}))
            await self.storage.save_thread(created)
            return MemoryThread(created, existed=False)
        if thread.resource_id != resource_id:
            raise InvalidArgument.field(
                "options.memory.resource",
                f"thread {thread_id!r} belongs to another resource",
                "THREAD_RESOURCE_MISMATCH",
            )
        if metadata is not None and metadata != thread.metadata:
            updated = await self.storage.update_thread(thread_id, metadata=dict(metadata))
            thread = updated or thread
        return MemoryThread(thread, existed=True)

    async def save(self, bound: MemoryThread, messages: MessageList) -> None:
        """Saves the run's new messages (not what memory recalled, not transient signals)."""
        await self._save(bound, _new(messages))

    async def save_partial(self, bound: MemoryThread, messages: MessageList) -> bool:
        """An aborted run's messages (persist_partial_on_abort), when it said
        anything: tool calls left unanswered are left out (a prompt cannot
        replay them), and so is any reply they leave empty. False when there
        was no assistant text, and nothing was saved."""
        answered = {p.tool_call_id for m in messages.get_all() for p in m.parts if isinstance(p, ToolResultPart)}
        kept: list[Message] = []
        for message in _new(messages):
            parts = [p for p in message.parts if not isinstance(p, ToolCallPart) or p.tool_call_id in answered]
            if parts:
                kept.append(message if len(parts) == len(message.parts) else replace(message, parts=parts))
        if not any(m.role == "assistant" and m.text for m in kept):
            return False
        await self._save(bound, kept)
        return True

    async def _save(self, bound: MemoryThread, new: list[Message]) -> None:
        thread = bound.thread
        if not bound.existed and await self.storage.get_thread(thread.id) is None:
            await self.storage.save_thread(thread)
        for message in new:
            message.thread_id, message.resource_id = thread.id, thread.resource_id
        await self.storage.save_messages(new)
        await self.storage.update_thread(thread.id)  # bumps updated_at


class _MemoryProcessor(Processor):
    """A processor of `memory`, for the runs bound to a thread."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    @staticmethod
    def bound(args: HookArgs) -> MemoryThread | None:
        """The thread the run is bound to (None: the run has no memory)."""
        thread: MemoryThread | None = args.request_context.get(MEMORY_THREAD_KEY)
        return thread


class _LoadHistory(_MemoryProcessor):
    id = "memory-history"

    async def process_input(self, args: ProcessInputArgs) -> None:
        bound = self.bound(args)
        if bound is None or not bound.existed or self.memory.last_messages == 0:
            return
        history = await self.memory.storage.last_messages(bound.thread.id, self.memory.last_messages)
        args.message_list.prepend(history, "memory")


class _SaveMessages(_MemoryProcessor):
    id = "memory-save"

    async def process_output_result(self, args: ProcessOutputResultArgs) -> None:
        bound = self.bound(args)
        if bound is not None:
            await self.memory.save(bound, args.message_list)


def _new(messages: MessageList) -> list[Message]:
    """What a run adds to its thread: everything but recalled history and transient signals."""
    return [m for m in messages.get_all() if messages.source_of(m.id) != "memory" and not _transient(m)]


def _transient(message: Message) -> bool:
    return any(isinstance(p, SignalPart) and getattr(p.signal, "transient", None) for p in message.parts)


class ContextOverflowTrim(Processor):
    """When the model reports a context overflow, drops the older half of the
    recalled history (never this call's input) and retries once."""

    id = "memory-context-overflow"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        if args.state.get("trimmed") or not _OVERFLOW.search(str(args.error)):
            return None
        remembered = args.message_list.get_remembered()
        if not remembered:
            return None
        args.message_list.remove_by_ids([m.id for m in remembered[: max(1, len(remembered) // 2)]])
        args.state["trimmed"] = True
        log.warning("context overflow: dropped %d recalled messages and retried", max(1, len(remembered) // 2))
        return APIErrorResult(retry=True)
