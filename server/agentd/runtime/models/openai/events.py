"""Chat Completions stream chunks as agentd model events (plain JSON, no SDK).

`content` deltas → text start/delta/end; `reasoning_content` or `reasoning`
deltas (compatible servers) → reasoning start/delta/end; `tool_calls` deltas
by index → tool-call start (when a call first appears with its name), deltas
(argument fragments), and at the end of the stream tool-call end plus the
parsed tool call (arguments that do not parse become `{}`, the raw text kept
in the call's provider metadata under `openai.rawArguments`); usage
(`stream_options.include_usage`) and the finish reason → the closing
ModelFinish. Finish reasons: stop → stop, length → length,
tool_calls/function_call → tool-calls, content_filter → content-filter,
anything else → other; a stream that carried tool calls but says `stop` (some
compatible servers) finishes as tool-calls. A stream that ends before a
finish reason (a mid-stream disconnect) is a retryable error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.chunks import FinishReason, ToolCall, ToolCallDelta, ToolCallEnd, ToolCallStart, Usage
from agentd.runtime.messages import ToolCallPart, new_id
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelFinish
from agentd.runtime.models.common import JSONObject, OpenParts, int_or_none
from agentd.runtime.models.openai.request import PROVIDER

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}


@dataclass(slots=True)
class _Call:
    id: str
    name: str = ""
    started: bool = False
    pending: list[str] = field(default_factory=list)  # fragments seen before the name
    args: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StreamState:
    """One call's stream: `feed` each chunk (as a dict), then `finish`."""

    parts: OpenParts = field(default_factory=OpenParts)
    calls: list[_Call] = field(default_factory=list)
    by_index: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: JSONObject | None = None
    metadata: JSONObject = field(default_factory=dict)

    def feed(self, chunk: JSONObject) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for key, name in (("id", "responseId"), ("model", "model"), ("system_fingerprint", "systemFingerprint")):
            value = chunk.get(key)
            if isinstance(value, str) and value and name not in self.metadata:
                self.metadata[name] = value
        if isinstance(chunk.get("service_tier"), str):
            self.metadata["serviceTier"] = chunk["service_tier"]
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if isinstance(delta, dict):
                events.extend(self._delta(delta))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        return events

    def _delta(self, delta: JSONObject) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        reasoning = delta.get("reasoning_content")
        if not isinstance(reasoning, str) or not reasoning:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.extend(self.parts.reasoning(reasoning))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                events.extend(self.parts.text(text))
        for raw in delta.get("tool_calls") or ():
            if isinstance(raw, dict):
                events.extend(self._tool_delta(raw))
        return events

    def _tool_delta(self, raw: JSONObject) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        index = raw.get("index")
        if not isinstance(index, int):
            index = len(self.calls)
        raw_function, raw_id = raw.get("function"), raw.get("id")
        function: JSONObject = raw_function if isinstance(raw_function, dict) else {}
        call_id = raw_id if isinstance(raw_id, str) and raw_id else None
        call = self.by_index.get(index)
        # A new id at a known index is a new call (some servers reuse index 0).
        if call is None or (call_id is not None and call_id != call.id):
            call = _Call(call_id or new_id("call_"))
            self.calls.append(call)
            self.by_index[index] = call
            events.extend(self.parts.end_both())
        name = function.get("name")
        if not call.started and isinstance(name, str) and name:
            call.name = name
            call.started = True
            events.append(ToolCallStart(call.id, call.name))
            if call.pending:
                events.append(ToolCallDelta(call.id, "".join(call.pending), call.name))
                call.pending.clear()
        fragment = function.get("arguments")
        if isinstance(fragment, str) and fragment:
            call.args.append(fragment)
            if call.started:
                events.append(ToolCallDelta(call.id, fragment, call.name))
            else:
                call.pending.append(fragment)
        return events

    def finish(self) -> list[ModelEvent]:
        if self.finish_reason is None:
            raise ModelAPIError(
                "the model stream ended before a finish reason (connection closed early)",
                retryable=True,
                details={"partial": True},
            )
        events = self.parts.end_both()
        for call in self.calls:
            if not call.started:
                events.append(ToolCallStart(call.id, call.name))
                if call.pending:
                    events.append(ToolCallDelta(call.id, "".join(call.pending), call.name))
            events.append(ToolCallEnd(call.id))
            text = "".join(call.args)
            args, ok = _parse_args(text)
            metadata = None if ok else {PROVIDER: {"rawArguments": text}}
            events.append(ToolCall(ToolCallPart(call.id, call.name, args, provider_metadata=metadata)))
        reason = _FINISH_REASONS.get(self.finish_reason, "other")
        if self.calls and reason == "stop":
            reason = "tool-calls"
        metadata = {PROVIDER: dict(self.metadata)} if self.metadata else None
        events.append(ModelFinish(reason, convert_usage(self.usage), self.finish_reason, metadata))
        return events


def _parse_args(text: str) -> tuple[Any, bool]:
    if not text.strip():
        return {}, True
    try:
        return json.loads(text), True
    except ValueError:
        return {}, False


def convert_usage(usage: JSONObject | None) -> Usage:
    if not usage:
        return Usage()
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    input_tokens = int_or_none(usage.get("prompt_tokens"))
    output_tokens = int_or_none(usage.get("completion_tokens"))
    total = int_or_none(usage.get("total_tokens"))
    if total is None and input_tokens is not None and output_tokens is not None:
        total = input_tokens + output_tokens
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        reasoning_tokens=int_or_none(completion_details.get("reasoning_tokens"))
        if isinstance(completion_details, dict)
        else None,
        cached_input_tokens=int_or_none(prompt_details.get("cached_tokens"))
        if isinstance(prompt_details, dict)
        else None,
    )
