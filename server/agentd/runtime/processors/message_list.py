"""MessageList: the live conversation of one run, each message tagged with its source.

Sources: `input` (this call's new messages), `memory` (loaded history),
`response` (what the model produced in this run), `context`. System messages
live apart: untagged ones (instructions, caller system prompts) are what hooks
see as `system_messages`; tagged ones belong to a processor (e.g. memory) and
join the prompt when it is assembled.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any, Literal

from agentd.runtime.messages import Message, SignalPart, TextPart, ToolResultPart, aware

Source = Literal["input", "memory", "response", "context"]
#: The smallest step of time storage keeps (microseconds).
_TICK = timedelta(microseconds=1)


class ExternalMessageListError(TypeError):
    """A hook returned a MessageList other than the one it was given."""

    reason = "PROCESSOR_RETURNED_EXTERNAL_MESSAGE_LIST"


class MessageList:
    def __init__(self, system: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        self._sources: dict[str, Source] = {}
        self._system: list[Message] = list(system)
        self._tagged: dict[str, list[Message]] = {}

    # ------------------------------------------------------------ reading

    def get_all(self) -> list[Message]:
        return list(self._messages)

    def _by_source(self, source: Source) -> list[Message]:
        return [m for m in self._messages if self._sources.get(m.id) == source]

    def get_input(self) -> list[Message]:
        return self._by_source("input")

    def get_response(self) -> list[Message]:
        return self._by_source("response")

    def get_remembered(self) -> list[Message]:
        return self._by_source("memory")

    def source_of(self, message_id: str) -> Source | None:
        return self._sources.get(message_id)

    def get(self, message_id: str) -> Message | None:
        for message in self._messages:
            if message.id == message_id:
                return message
        return None

    def __len__(self) -> int:
        return len(self._messages)

    @property
    def system_messages(self) -> list[Message]:
        """The untagged system messages."""
        return list(self._system)

    def all_system_messages(self) -> list[Message]:
        if not self._tagged:
            return list(self._system)
        return [*self._system, *(m for tagged in self._tagged.values() for m in tagged)]

    # ------------------------------------------------------------ writing

    def add(self, message: Message, source: Source = "input") -> None:
        """Adds a message, or replaces the one with the same id in place (it
        keeps that one's created_at: its place in time too). A message added
        anew, unless recalled from memory, is created after every message
        already listed, so storage, which orders by created_at, keeps the list's
        order: a signal that arrived during a reply joins after that reply."""
        if message.role == "system":
            self.add_system(message)
            return
        messages = self._messages
        if message.id in self._sources:  # listed (every listed id has a source): no scan for a new one
            for i, existing in enumerate(messages):
                if existing.id == message.id:
                    message.created_at = existing.created_at
                    messages[i] = message
                    self._sources[message.id] = source
                    return
        if source != "memory" and messages:
            latest = max([aware(m.created_at) for m in messages])
            if aware(message.created_at) <= latest:
                message.created_at = latest + _TICK
        messages.append(message)
        self._sources[message.id] = source

    def prepend(self, messages: Iterable[Message], source: Source = "memory") -> None:
        """Puts messages before everything else (history recalled before the
        input). What was listed already is created after what is put before it,
        as `add` keeps it: a queued run's opening signal, sent while the run it
        waited for was replying, is stored after that reply."""
        added = [m for m in messages if m.role != "system"]
        for message in added:
            self._sources[message.id] = source
        known = {m.id for m in added}
        rest = [m for m in self._messages if m.id not in known]
        self._messages = [*added, *rest]
        if not added:
            return
        floor = max(aware(m.created_at) for m in added)
        for message in rest:
            if aware(message.created_at) <= floor:
                message.created_at = floor + _TICK
            floor = aware(message.created_at)

    def extend(self, messages: Iterable[Message], source: Source = "input") -> None:
        for message in messages:
            self.add(message, source)

    def remove_by_ids(self, ids: Iterable[str]) -> list[Message]:
        wanted = set(ids)
        removed = [m for m in self._messages if m.id in wanted]
        self._messages = [m for m in self._messages if m.id not in wanted]
        for message in removed:
            self._sources.pop(message.id, None)
        return removed

    def add_system(self, message: Message | str, tag: str | None = None) -> None:
        if isinstance(message, str):
            message = Message.system(message)
        if tag is None:
            self._system.append(message)
        else:
            self._tagged.setdefault(tag, []).append(message)

    def replace_all_system_messages(self, messages: Sequence[Message]) -> None:
        self._system = list(messages)

    def clear_tagged_system(self, tag: str) -> None:
        self._tagged.pop(tag, None)

    def update_tool_result(self, tool_call_id: str, result: Any) -> bool:
        """Rewrites a tool result; the runtime re-reads it before emitting the chunk."""
        for message in self._messages:
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.tool_call_id == tool_call_id:
                    part.result = result
                    return True
        return False

    def find_tool_result(self, tool_call_id: str) -> ToolResultPart | None:
        for message in self._messages:
            for part in message.parts:
                if isinstance(part, ToolResultPart) and part.tool_call_id == tool_call_id:
                    return part
        return None

    # ------------------------------------------------------------ hooks' results

    def apply(self, returned: Sequence[Message], view: Sequence[Message], default_source: Source) -> None:
        """The common rule for a hook that returned messages: ids of `view` that
        are missing from `returned` are removed; each returned message replaces
        its old copy keeping its source (new ones get `default_source`);
        system-role messages become untagged system text."""
        kept = {m.id for m in returned}
        self.remove_by_ids([m.id for m in view if m.id not in kept])
        for message in returned:
            if message.role == "system":
                text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
                self.remove_by_ids([message.id])
                self.add_system(Message.system(text))
                continue
            self.add(message, self._sources.get(message.id, default_source))

    def clone(self) -> MessageList:
        """A deep copy (parallel workflow branches each work on their own)."""
        return copy.deepcopy(self)

    def signals(self) -> list[Message]:
        return [m for m in self._messages if any(isinstance(p, SignalPart) for p in m.parts)]
