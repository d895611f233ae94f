"""Gemini SDK response chunks as agentd model events.

Text parts → text-start/delta/end; thought parts → reasoning (the thought
signature on reasoning-end, as `signature` and as
provider_metadata["google"]["thoughtSignature"], which the loop keeps as the
reasoning part's options and so sends back; a text part's signature on
text-end's provider metadata); a functionCall (whole in one chunk) →
tool-call input start, one delta with the full JSON arguments, end, then
tool-call (the API's id, else a generated one; thoughtSignature and the API's
id in provider_metadata["google"], replayed on the next request); inlineData
→ a file chunk. Usage: promptTokenCount → input, candidatesTokenCount +
thoughtsTokenCount → output, thoughtsTokenCount → reasoning,
cachedContentTokenCount → cached input, totalTokenCount → total. Finish:
STOP → stop (tool-calls when the step called a function), MAX_TOKENS →
length, SAFETY/RECITATION/BLOCKLIST/PROHIBITED_CONTENT/SPII/IMAGE_* →
content-filter (also a prompt blocked by promptFeedback), else other. A
stream that ends without a finish reason is a retryable error.
Code-execution parts (executableCode, codeExecutionResult) are not mapped.
"""

from __future__ import annotations

import base64
from typing import Any

import pydantic
from google.genai import types

from agentd.runtime.chunks import File, FinishReason, Usage
from agentd.runtime.messages import FilePart, new_id
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelFinish
from agentd.runtime.models.common import OpenParts, whole_tool_call
from agentd.runtime.models.google.request import PROVIDER

_CONTENT_FILTER = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data else None


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _dump(model: pydantic.BaseModel | None) -> Any:
    return None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)


class StreamState:
    """Turns the SDK's response chunks into agentd events: `feed` each, then `finish`."""

    def __init__(self) -> None:
        self.parts = OpenParts()
        #: The thought signatures of the open text and reasoning: they go on their end.
        self.text_signature: str | None = None
        self.reasoning_signature: str | None = None
        self.calls = 0
        self.finish_raw: str | None = None
        self.blocked: str | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.metadata: dict[str, Any] = {}

    def _close_text(self) -> list[ModelEvent]:
        if self.parts.text_id is None:
            return []
        meta = {PROVIDER: {"thoughtSignature": self.text_signature}} if self.text_signature else None
        self.text_signature = None
        return self.parts.end_text(provider_metadata=meta)

    def _close_reasoning(self) -> list[ModelEvent]:
        if self.parts.reasoning_id is None:
            return []
        signature, self.reasoning_signature = self.reasoning_signature, None
        # The google-scoped copy is what comes back as the reasoning part's options
        # (and so as the thought part's thoughtSignature) on the next request.
        meta = {PROVIDER: {"thoughtSignature": signature}} if signature else None
        return self.parts.end_reasoning(signature, meta)

    def feed(self, response: types.GenerateContentResponse) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        if response.usage_metadata is not None:
            self.usage = response.usage_metadata  # a running total: the last one counts
        if response.response_id:
            self.metadata["responseId"] = response.response_id
        if response.model_version:
            self.metadata["modelVersion"] = response.model_version
        feedback = response.prompt_feedback
        if feedback is not None:
            self.metadata["promptFeedback"] = _dump(feedback)
            if feedback.block_reason is not None:
                self.blocked = _enum_name(feedback.block_reason)
        if not response.candidates:
            return out
        candidate = response.candidates[0]
        parts = candidate.content.parts if candidate.content is not None and candidate.content.parts else []
        for part in parts:
            out.extend(self._part(part))
        if candidate.finish_reason is not None:
            self.finish_raw = _enum_name(candidate.finish_reason)
        if candidate.safety_ratings:
            self.metadata["safetyRatings"] = [_dump(r) for r in candidate.safety_ratings]
        if candidate.grounding_metadata is not None:
            self.metadata["groundingMetadata"] = _dump(candidate.grounding_metadata)
        if candidate.url_context_metadata is not None:
            self.metadata["urlContextMetadata"] = _dump(candidate.url_context_metadata)
        return out

    def _part(self, part: types.Part) -> list[ModelEvent]:
        out: list[ModelEvent] = []
        signature = _b64(part.thought_signature)
        if part.text is not None and part.thought:
            out.extend(self._close_text())
            if part.text:
                out.extend(self.parts.reasoning(part.text))
            elif signature:  # a signature-only thought part still opens the reasoning it signs
                out.extend(self.parts.start_reasoning())
            self.reasoning_signature = signature or self.reasoning_signature
        elif part.text is not None:
            out.extend(self._close_reasoning())
            if part.text:
                out.extend(self.parts.text(part.text))
            self.text_signature = signature or self.text_signature
        elif part.function_call is not None:
            out.extend(self._close_reasoning())
            out.extend(self._close_text())
            out.extend(self._call(part.function_call, signature))
        elif part.inline_data is not None and part.inline_data.data is not None:
            out.extend(self._close_reasoning())
            out.extend(self._close_text())
            media_type = part.inline_data.mime_type or "application/octet-stream"
            out.append(File(FilePart(media_type, data=part.inline_data.data)))
        return out

    def _call(self, call: types.FunctionCall, signature: str | None) -> list[ModelEvent]:
        self.calls += 1
        call_id = call.id or new_id("call_")
        name = call.name or ""
        args: dict[str, Any] = dict(call.args or {})
        google: dict[str, Any] = {}
        if signature:
            google["thoughtSignature"] = signature
        if call.id:
            google["functionCallId"] = call.id
        return whole_tool_call(call_id, name, args, {PROVIDER: google} if google else None)

    def finish_reason(self) -> FinishReason:
        if self.blocked is not None and self.finish_raw is None:
            return "content-filter"
        raw = self.finish_raw or ""
        if raw == "STOP":
            return "tool-calls" if self.calls else "stop"
        if raw == "MAX_TOKENS":
            return "length"
        if raw in _CONTENT_FILTER:
            return "content-filter"
        return "other"

    def finish(self) -> list[ModelEvent]:
        out = [*self._close_reasoning(), *self._close_text()]
        if self.finish_raw is None and self.blocked is None:
            raise ModelAPIError("the Gemini API stream ended before a finish reason", retryable=True)
        if self.usage is not None:
            self.metadata["usageMetadata"] = _dump(self.usage)
        out.append(
            ModelFinish(
                self.finish_reason(),
                _usage(self.usage),
                raw_finish_reason=self.finish_raw or self.blocked,
                provider_metadata={PROVIDER: self.metadata} if self.metadata else None,
            )
        )
        return out


def _usage(usage: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if usage is None:
        return Usage()
    candidates, thoughts = usage.candidates_token_count, usage.thoughts_token_count
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return Usage(
        input_tokens=usage.prompt_token_count,
        output_tokens=output,
        total_tokens=usage.total_token_count,
        reasoning_tokens=thoughts,
        cached_input_tokens=usage.cached_content_token_count,
    )
