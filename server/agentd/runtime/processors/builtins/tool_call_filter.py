"""ToolCallFilter ("tool-call-filter"): keeps tool calls of earlier turns out of the model's input.

By default the tool calls (and their results) of earlier history are removed and
those of the current agent loop are kept. Earlier history is what memory loaded
(MessageList source "memory"), plus input messages that come before the newest
user message (a caller that sends its own history as input); without a
MessageList, everything before the newest user message.

Options:
* `exclude`: only these tools are filtered (omitted: every tool; `[]`: none).
* `filter_after_tool_steps`: also filter during the loop, keeping the tool calls
  of the N most recent tool-producing steps (0: none are kept).
* `preserve_model_output`: a filtered call that completed leaves a compact
  model-facing note in place of its result (`[tool <name> returned: <json>]`);
  its raw args and result are dropped.

A call whose result is in the current loop is never filtered (e.g. a client tool
answered by this call's input), so no result is left without its call. Messages
left with no parts are dropped. The filter changes only the prompt of each model
call (process_llm_request): stored messages, memory and the stream are untouched.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from agentd.runtime.messages import Message, Part, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.processors.base import LLMRequestResult, ProcessLLMRequestArgs, Processor
from agentd.runtime.processors.message_list import MessageList

#: Where a tool's model-facing form of its result is kept (provider_metadata).
MODEL_OUTPUT_KEY = ("agentd", "modelOutput")


class ToolCallFilter(Processor):
    id = "tool-call-filter"
    name = "Tool Call Filter"

    def __init__(
        self,
        *,
        exclude: Sequence[str] | None = None,
        filter_after_tool_steps: int | None = None,
        preserve_model_output: bool = False,
    ) -> None:
        if exclude is not None:
            if isinstance(exclude, str) or not all(isinstance(name, str) for name in exclude):
                raise ValueError("exclude must be a list of tool names")
            exclude = tuple(exclude)
        if filter_after_tool_steps is not None and (
            isinstance(filter_after_tool_steps, bool)
            or not isinstance(filter_after_tool_steps, int)
            or filter_after_tool_steps < 0
        ):
            raise ValueError(f"filter_after_tool_steps must be a non-negative integer, not {filter_after_tool_steps!r}")
        if not isinstance(preserve_model_output, bool):
            raise ValueError("preserve_model_output must be a boolean")
        self.id = type(self).id
        self.exclude: tuple[str, ...] | None = exclude
        self.filter_after_tool_steps = filter_after_tool_steps
        self.preserve_model_output = preserve_model_output

    def _selected(self, tool_name: str) -> bool:
        return self.exclude is None or tool_name in self.exclude

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
        prompt = self.filter(args.prompt, args.message_list)
        return None if prompt is None else LLMRequestResult(prompt=prompt)

    def filter(self, prompt: Sequence[Message], message_list: MessageList | None = None) -> list[Message] | None:
        """The filtered prompt (new message objects where something changed;
        the given messages are never mutated), or None when nothing changes."""
        if self.exclude is not None and not self.exclude:
            return None
        history = _history_flags(prompt, message_list)
        current_results = {
            part.tool_call_id
            for i, message in enumerate(prompt)
            if not history[i]
            for part in message.parts
            if isinstance(part, ToolResultPart)
        }
        old_steps: set[int] = set()
        if self.filter_after_tool_steps is not None:
            steps = [
                i
                for i, message in enumerate(prompt)
                if not history[i] and any(isinstance(p, ToolCallPart) for p in message.parts)
            ]
            keep = self.filter_after_tool_steps
            old_steps = set(steps[: len(steps) - keep] if keep else steps)

        filtered: set[str] = set()
        seen_calls: set[str] = set()
        for i, message in enumerate(prompt):
            for part in message.parts:
                if not isinstance(part, ToolCallPart):
                    continue
                seen_calls.add(part.tool_call_id)
                if not self._selected(part.tool_name):
                    continue
                if history[i] and part.tool_call_id not in current_results:
                    filtered.add(part.tool_call_id)
                elif i in old_steps:
                    filtered.add(part.tool_call_id)

        out: list[Message] = []
        changed = False
        for i, message in enumerate(prompt):
            parts: list[Part] = []
            for part in message.parts:
                if isinstance(part, ToolCallPart) and part.tool_call_id in filtered:
                    continue
                if isinstance(part, ToolResultPart) and (
                    part.tool_call_id in filtered
                    # a result in history whose call is not in the prompt at all
                    or (history[i] and self._selected(part.tool_name) and part.tool_call_id not in seen_calls)
                ):
                    if self.preserve_model_output:
                        parts.append(TextPart(_model_note(part)))
                    continue
                parts.append(part)
            if len(parts) == len(message.parts) and all(a is b for a, b in zip(parts, message.parts, strict=True)):
                out.append(message)
                continue
            changed = True
            if parts:
                out.append(dataclasses.replace(message, parts=parts))
        return out if changed else None


def _is_user_turn(message: Message) -> bool:
    """A user message that is not only tool results."""
    return message.role == "user" and not (message.parts and all(isinstance(p, ToolResultPart) for p in message.parts))


def _history_flags(prompt: Sequence[Message], message_list: MessageList | None) -> list[bool]:
    """For each prompt message: is it earlier history (not the current loop)?"""
    newest_user = max((i for i, m in enumerate(prompt) if _is_user_turn(m)), default=-1)
    flags: list[bool] = []
    for i, message in enumerate(prompt):
        if message.role == "system":
            flags.append(False)
            continue
        source = message_list.source_of(message.id) if message_list is not None else None
        if source == "memory":
            flags.append(True)
        elif source in ("response", "context"):
            flags.append(False)
        else:  # input, or not in the list: by position
            flags.append(i < newest_user)
    return flags


def _model_note(result: ToolResultPart) -> str:
    verb = "failed" if result.is_error else "returned"
    return f"[tool {result.tool_name} {verb}: {_model_output(result)}]"


def _model_output(result: ToolResultPart) -> str:
    value: Any = result.result
    metadata: Any = result.provider_metadata or {}
    for key in MODEL_OUTPUT_KEY:
        metadata = metadata.get(key) if isinstance(metadata, dict) else None
    if metadata is not None:
        value = metadata
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)
