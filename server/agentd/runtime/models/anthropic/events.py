"""Messages API stream events as agentd model events (duck-typed: SDK objects or dicts).

`message_start` → response-metadata; `text` blocks → text-start/delta/end;
`thinking` → reasoning-start/delta/end with the signature (also in provider
metadata `anthropic.signature`); `redacted_thinking` → an empty reasoning
block carrying `redacted_data` (the provider's opaque string, UTF-8 encoded);
`tool_use` → tool-call streaming start, one delta per `input_json_delta`,
end, then the parsed tool-call; `message_delta`/`message_stop` → the
ModelFinish with usage (input, output, `cache_read_input_tokens` → cached
input, `cache_creation_input_tokens`, and thinking tokens → reasoning tokens
when reported) and the finish reason (end_turn/stop_sequence → stop,
max_tokens/model_context_window_exceeded → length, tool_use → tool-calls,
refusal → content-filter, anything else → other). Other block types (server
tools, citations) are not mapped. A stream that ends without `message_stop`
is a retryable `connection_error`.

Structured output (see `request`): the structured-output tool's streamed
input is surfaced as the step's text (text-start / text-delta / text-end, the
JSON as the model writes it) and its `tool_use` stop reason as `stop`, so the
loop parses the object from the text; a wrapped schema's text is emitted,
unwrapped, once the value is complete.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.chunks import (
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ResponseMetadata,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from agentd.runtime.messages import ToolCallPart, new_id
from agentd.runtime.models.anthropic.errors import connection_lost
from agentd.runtime.models.anthropic.request import PROVIDER, StructuredTool
from agentd.runtime.models.base import ModelEvent, ModelFinish
from agentd.runtime.models.common import int_or_none

log = logging.getLogger(__name__)

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK event object (or of a plain dict)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


@dataclass(slots=True)
class _Block:
    kind: str  # text | reasoning | redacted | tool | structured | other
    id: str
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""


class StreamDecoder:
    """Turns the provider's stream events into agentd model events, one event at a time."""

    def __init__(self, structured: StructuredTool | None = None) -> None:
        self.structured = structured
        self.blocks: dict[int, _Block] = {}
        self.usage: dict[str, int | None] = {}
        self.stop_reason: str | None = None
        self.stop_sequence: str | None = None
        self.message_id: str | None = None
        self.model: str | None = None
        self.tool_calls = 0
        self.structured_calls = 0
        self.stopped = False

    def _take_usage(self, usage: Any) -> None:
        if usage is None:
            return
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            value = int_or_none(_get(usage, key))
            if value is not None:
                self.usage[key] = value
        thinking = int_or_none(_get(_get(usage, "output_tokens_details"), "thinking_tokens"))
        if thinking is not None:
            self.usage["thinking_tokens"] = thinking

    def feed(self, event: Any) -> list[ModelEvent]:
        kind = _get(event, "type")
        if kind == "message_start":
            message = _get(event, "message")
            self.message_id, self.model = _get(message, "id"), _get(message, "model")
            self._take_usage(_get(message, "usage"))
            return [ResponseMetadata(response_id=self.message_id, model_id=self.model)]
        if kind == "content_block_start":
            return self._start(int(_get(event, "index") or 0), _get(event, "content_block"))
        if kind == "content_block_delta":
            return self._delta(int(_get(event, "index") or 0), _get(event, "delta"))
        if kind == "content_block_stop":
            return self._stop(int(_get(event, "index") or 0))
        if kind == "message_delta":
            delta = _get(event, "delta")
            self.stop_reason = _get(delta, "stop_reason") or self.stop_reason
            self.stop_sequence = _get(delta, "stop_sequence") or self.stop_sequence
            self._take_usage(_get(event, "usage"))
        elif kind == "message_stop":
            self.stopped = True
        return []

    def _start(self, index: int, block: Any) -> list[ModelEvent]:
        kind = _get(block, "type")
        if kind == "text":
            self.blocks[index] = _Block("text", new_id("txt_"))
            out: list[ModelEvent] = [TextStart(self.blocks[index].id)]
            text = _get(block, "text")
            if text:
                out.append(TextDelta(self.blocks[index].id, str(text)))
            return out
        if kind == "thinking":
            entry = self.blocks[index] = _Block("reasoning", new_id("rs_"))
            entry.signature = str(_get(block, "signature") or "")
            out = [ReasoningStart(entry.id)]
            text = _get(block, "thinking")
            if text:
                out.append(ReasoningDelta(entry.id, str(text)))
            return out
        if kind == "redacted_thinking":
            entry = self.blocks[index] = _Block("redacted", new_id("rs_"))
            entry.data = str(_get(block, "data") or "")
            return [ReasoningStart(entry.id)]
        if kind == "tool_use":
            call_id, name = str(_get(block, "id") or new_id("toolu_")), str(_get(block, "name") or "")
            if self.structured is not None and name == self.structured.name:
                entry = self.blocks[index] = _Block("structured", new_id("txt_"), name)
                return [] if self.structured.wrapped else [TextStart(entry.id)]
            self.blocks[index] = _Block("tool", call_id, name)
            return [ToolCallStart(call_id, name)]
        self.blocks[index] = _Block("other", "")
        log.debug("%s content block %r is not mapped", PROVIDER, kind)
        return []

    def _delta(self, index: int, delta: Any) -> list[ModelEvent]:
        entry = self.blocks.get(index)
        kind = _get(delta, "type")
        if entry is None:
            return []
        if kind == "text_delta" and entry.kind == "text":
            return [TextDelta(entry.id, str(_get(delta, "text") or ""))]
        if kind == "thinking_delta" and entry.kind == "reasoning":
            return [ReasoningDelta(entry.id, str(_get(delta, "thinking") or ""))]
        if kind == "signature_delta" and entry.kind == "reasoning":
            entry.signature += str(_get(delta, "signature") or "")
            return []
        if kind == "input_json_delta":
            piece = str(_get(delta, "partial_json") or "")
            if not piece:
                return []
            entry.parts.append(piece)
            if entry.kind == "tool":
                return [ToolCallDelta(entry.id, piece, entry.name)]
            if entry.kind == "structured" and self.structured is not None and not self.structured.wrapped:
                return [TextDelta(entry.id, piece)]
        return []

    def _stop(self, index: int) -> list[ModelEvent]:
        entry = self.blocks.pop(index, None)
        if entry is None:
            return []
        if entry.kind == "text":
            return [TextEnd(entry.id)]
        if entry.kind == "reasoning":
            signature = entry.signature or None
            metadata = {PROVIDER: {"signature": signature}} if signature else None
            return [ReasoningEnd(entry.id, signature=signature, provider_metadata=metadata)]
        if entry.kind == "redacted":
            return [
                ReasoningEnd(
                    entry.id,
                    redacted_data=entry.data.encode("utf-8"),
                    provider_metadata={PROVIDER: {"redactedData": entry.data}},
                )
            ]
        if entry.kind == "tool":
            self.tool_calls += 1
            text = "".join(entry.parts)
            return [ToolCallEnd(entry.id), ToolCall(ToolCallPart(entry.id, entry.name, _parse_args(text)))]
        if entry.kind == "structured":
            self.structured_calls += 1
            text = "".join(entry.parts)
            if self.structured is not None and self.structured.wrapped:
                value = _parse_args(text)
                text = json.dumps(value.get("value") if isinstance(value, dict) else value, ensure_ascii=False)
                return [TextStart(entry.id), TextDelta(entry.id, text), TextEnd(entry.id)]
            return [TextEnd(entry.id)]
        return []

    def finish(self) -> ModelFinish:
        if not self.stopped:
            raise connection_lost(f"the {PROVIDER} stream ended before message_stop")
        raw = self.stop_reason
        reason: FinishReason = _FINISH_REASONS.get(raw or "", "other")
        if raw == "tool_use" and self.tool_calls == 0 and self.structured_calls > 0:
            reason = "stop"  # the structured-output tool is the answer, not a call to run
        usage = self.usage
        input_tokens, output_tokens = usage.get("input_tokens"), usage.get("output_tokens")
        total = None if input_tokens is None and output_tokens is None else (input_tokens or 0) + (output_tokens or 0)
        metadata: dict[str, Any] = {
            "messageId": self.message_id,
            "model": self.model,
            "stopSequence": self.stop_sequence,
            "cacheCreationInputTokens": usage.get("cache_creation_input_tokens"),
            "cacheReadInputTokens": usage.get("cache_read_input_tokens"),
        }
        return ModelFinish(
            reason,
            Usage(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                total_tokens=total,
                reasoning_tokens=usage.get("thinking_tokens"),
                cached_input_tokens=usage.get("cache_read_input_tokens"),
                cache_creation_input_tokens=usage.get("cache_creation_input_tokens"),
            ),
            raw_finish_reason=raw,
            provider_metadata={PROVIDER: {k: v for k, v in metadata.items() if v is not None}},
        )


def _parse_args(text: str) -> Any:
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text  # the model wrote invalid JSON: the tool sees what it wrote
