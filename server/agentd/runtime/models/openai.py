"""The `openai/...` models: OpenAI Chat Completions, streamed, over the official `openai` SDK.

The Chat Completions API is used (not Responses) because every OpenAI-compatible
server speaks it: set OPENAI_BASE_URL to point the adapter at one.

Configuration (read by `create`): OPENAI_API_KEY (required: FAILED_PRECONDITION
CREDENTIALS_MISSING when unset; any placeholder will do for a local server that
needs none), OPENAI_BASE_URL (optional), OPENAI_ORG_ID and OPENAI_PROJECT_ID
(optional). The SDK's own retries are off (`max_retries=0`): retrying is the
error processors' job.

Request mapping (agentd → Chat Completions):

* system messages → one `system` message each (text parts joined);
* user messages → `user` messages: a lone text part as a string, otherwise
  content parts: text; image files → `image_url` (a data: URL from inline
  bytes, or the file's URL); wav/mp3 audio bytes → `input_audio`; inline text/*
  files → a text part holding the decoded text; other inline files (PDF, ...)
  → a `file` part with base64 `file_data`. A non-image file given only by URL
  cannot be sent (the API takes files inline): the call fails before any HTTP
  request with a ModelAPIError naming the media type in
  `details["unsupported_media_type"]`, which the default UnsupportedFileHandler
  turns into a placeholder and a retry;
* assistant messages → `assistant` messages with `content` and `tool_calls`;
  the tool results that follow the calls in the same agentd message become
  `tool` messages (`tool_call_id`; non-string results JSON-encoded). Reasoning
  parts are not sent back (the API has no field for them);
* tools → function tools (the tool's JSON schema as `parameters`); tool choice
  auto/none/required, or `{"type": "function", "function": {"name": ...}}`;
* structured output → `response_format` `{"type": "json_schema", "json_schema":
  {"name", "schema", "description"?}}` (strict mode is left to the server's
  default; pass `responseFormat` in provider options to choose it);
* settings → temperature, top_p, presence/frequency penalties, seed, stop;
  max_output_tokens → `max_completion_tokens` on the OpenAI endpoint, and
  `max_tokens` on any other base URL (what compatible servers understand);
  top_k → `top_k` on other base URLs only (the OpenAI endpoint rejects it: it
  is left out there, with a logged warning).

Provider options are passed through, never dropped: every key of
`provider_options["openai"]` (call level) goes into the request body with its
top-level key turned to snake_case (`reasoningEffort` → `reasoning_effort`;
nested values are sent as given) and wins over what the adapter set. Message
level `provider_options["openai"]` is merged the same way into that message's
dict (each dict an assistant message is split into, but not its `tool`
messages); part level options into that content part's dict, except
`imageDetail`/`detail` of an image part, which becomes `image_url.detail`.

Stream mapping (Chat Completions → agentd events): `content` deltas → text
start/delta/end; `reasoning_content` or `reasoning` deltas (compatible servers)
→ reasoning start/delta/end; `tool_calls` deltas by index → tool-call start
(when a call first appears with its name), deltas (argument fragments), and at
the end of the stream tool-call end plus the parsed tool call (arguments that
do not parse become `{}`, the raw text kept in the call's provider metadata
under `openai.rawArguments`); usage (`stream_options.include_usage`) and the
finish reason → the closing ModelFinish. Finish reasons: stop → stop, length →
length, tool_calls/function_call → tool-calls, content_filter →
content-filter, anything else → other; a stream that carried tool calls but
says `stop` (some compatible servers) finishes as tool-calls.

Errors: every failure becomes a ModelAPIError. HTTP errors carry the status,
the provider code (the error body's `code`, else its `type`), its message, and
`retryable` for 408, 409, 429 and 5xx (an `x-should-retry` header overrides);
`details` holds the error body (`error`), the request id and `retry_after_ms`
from Retry-After/Retry-After-Ms. Connection failures, timeouts and a stream
that ends before a finish reason (a mid-stream disconnect) are retryable with
no status. An error event inside the stream is retryable when its code or type
names a transient failure.

Cancellation: cancelling the consuming task closes the SDK stream and the
client, which closes the HTTP request. A client is made per call (the model
interface has no close hook to end a shared one).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, cast

import openai

from agentd.runtime.chunks import (
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCall,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
    Usage,
)
from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.messages import (
    FilePart,
    Message,
    Part,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    new_id,
    utcnow,
)
from agentd.runtime.models.base import (
    ModelAPIError,
    ModelEvent,
    ModelFinish,
    ModelRequest,
    ToolDefinition,
)
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice

log = logging.getLogger(__name__)

PROVIDER = "openai"
API_KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

JSONObject = dict[str, Any]

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
_TRANSIENT_CODE_MARKERS = ("server_error", "rate_limit", "overloaded", "timeout", "unavailable", "internal")
_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_CAMEL_BOUNDARY = re.compile(r"([a-z0-9])([A-Z])")
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")
_TRANSPORT_MODULES = ("httpx", "httpcore", "h11", "h2", "anyio")


def snake_case(key: str) -> str:
    """`reasoningEffort` → `reasoning_effort`; snake_case keys are unchanged."""
    return _CAMEL_BOUNDARY.sub(r"\1_\2", key).lower()


def _snake_keys(options: Mapping[str, Any]) -> JSONObject:
    return {snake_case(str(k)): v for k, v in options.items()}


def _openai_options(provider_options: Mapping[str, Any] | None, where: str) -> JSONObject:
    """The `openai` entry of some provider options, checked to be an object."""
    if not provider_options:
        return {}
    options = provider_options.get(PROVIDER)
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidArgument.field(where, "must be an object")
    return dict(options)


# ---------------------------------------------------------------- creation


def create(model_id: str, env: Mapping[str, str] | None = None, *, timeout: float | None = None) -> OpenAIModel:
    """An `openai/<model_id>` model configured from `env` (default: the process
    environment). `timeout` (seconds) replaces the SDK's default request timeout."""
    source = os.environ if env is None else env
    api_key = source.get(API_KEY_VARIABLE) or ""
    if not api_key.strip():
        raise FailedPrecondition(
            f"the openai provider needs an API key: set {API_KEY_VARIABLE}",
            "CREDENTIALS_MISSING",
            {"variable": API_KEY_VARIABLE, "provider": PROVIDER},
        )
    base_url = (source.get(BASE_URL_VARIABLE) or "").strip() or DEFAULT_BASE_URL
    return OpenAIModel(
        model_id,
        api_key=api_key,
        base_url=base_url,
        organization=source.get("OPENAI_ORG_ID") or None,
        project=source.get("OPENAI_PROJECT_ID") or None,
        timeout=timeout,
    )


class OpenAIModel:
    def __init__(
        self,
        model_id: str,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        organization: str | None = None,
        project: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self._model_id = model_id
        self._api_key = api_key
        self._base_url = base_url.rstrip("/")
        self._organization = organization
        self._project = project
        self._timeout = timeout

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def spec(self) -> str:
        return f"{PROVIDER}/{self._model_id}"

    @property
    def base_url(self) -> str:
        return self._base_url

    @property
    def is_official_endpoint(self) -> bool:
        """True for OpenAI's own API, False for a compatible server."""
        return self._base_url == DEFAULT_BASE_URL.rstrip("/")

    def build_params(self, request: ModelRequest) -> tuple[JSONObject, JSONObject]:
        """The typed request parameters and the provider options (extra body) of a call."""
        params: JSONObject = {"messages": convert_messages(request.prompt)}
        if request.tools:
            params["tools"] = [convert_tool(t) for t in request.tools]
            choice = convert_tool_choice(request.tool_choice)
            if choice is not None:
                params["tool_choice"] = choice
        if request.structured_output is not None:
            params["response_format"] = convert_structured_output(request.structured_output)
        params.update(self._settings(request.settings))
        # Body fields the SDK has no parameter for travel in its extra body,
        # with the provider options last so that they win.
        extra: JSONObject = {"top_k": params.pop("top_k")} if "top_k" in params else {}
        extra.update(_snake_keys(_openai_options(request.provider_options, "options.provider_options.openai")))
        return params, extra

    def _settings(self, settings: ModelSettings) -> JSONObject:
        out: JSONObject = {}
        for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed"):
            value = getattr(settings, name)
            if value is not None:
                out[name] = value
        if settings.stop_sequences:
            out["stop"] = list(settings.stop_sequences)
        if settings.max_output_tokens is not None:
            key = "max_completion_tokens" if self.is_official_endpoint else "max_tokens"
            out[key] = settings.max_output_tokens
        if settings.top_k is not None:
            if self.is_official_endpoint:
                log.warning("openai: top_k is not supported by the OpenAI API; not sent")
            else:
                out["top_k"] = settings.top_k
        return out

    def _client(self) -> openai.AsyncOpenAI:
        kwargs: JSONObject = {
            "api_key": self._api_key,
            "base_url": self._base_url,
            "organization": self._organization,
            "project": self._project,
            "max_retries": 0,  # retrying is the error processors' job
        }
        if self._timeout is not None:
            kwargs["timeout"] = self._timeout
        return openai.AsyncOpenAI(**kwargs)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Caller mistakes fail here, before the stream, as set-up errors.
        _openai_options(request.provider_options, "options.provider_options.openai")
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params, extra = self.build_params(request)  # may raise ModelAPIError (unsupported file)
        client = self._client()
        try:
            completions = cast(Any, client.chat.completions)  # the request is assembled as plain JSON
            try:
                sdk_stream = await completions.create(
                    model=self._model_id,
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body=extra or None,
                    **params,
                )
            except Exception as exc:
                raise _converted(exc) from exc
            async with sdk_stream:
                state = _StreamState()
                iterator = sdk_stream.__aiter__()
                while True:
                    try:
                        chunk = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    except Exception as exc:
                        raise _converted(exc) from exc
                    for event in state.feed(_as_dict(chunk)):
                        yield event
                for event in state.finish():
                    yield event
        finally:
            await client.close()


def _as_dict(chunk: Any) -> JSONObject:
    if isinstance(chunk, dict):
        return chunk
    return cast(JSONObject, chunk.to_dict())


# ---------------------------------------------------------------- request mapping


def convert_messages(prompt: list[Message]) -> list[JSONObject]:
    """agentd messages as Chat Completions messages (see the module docstring)."""
    out: list[JSONObject] = []
    for index, message in enumerate(prompt):
        options = _snake_keys(_openai_options(message.provider_options, f"prompt[{index}].provider_options.openai"))
        if message.role == "system":
            text = "\n".join(p.text for p in message.parts if isinstance(p, TextPart))
            out.append({"role": "system", "content": text, **options})
        elif message.role in ("user", "signal"):
            out.append({"role": "user", "content": _user_content(message.parts), **options})
        elif message.role == "assistant":
            out.extend(_assistant_messages(message.parts, options))
    return out


def _user_content(parts: list[Part]) -> str | list[JSONObject]:
    if len(parts) == 1 and isinstance(parts[0], TextPart) and not _part_options(parts[0]):
        return parts[0].text
    content: list[JSONObject] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text, **_part_options(part)})
        elif isinstance(part, FilePart):
            content.append(convert_file(part))
    return content


def _part_options(part: TextPart | FilePart) -> JSONObject:
    return _snake_keys(_openai_options(part.provider_options, f"{part.type} part provider_options.openai"))


def _data_url(part: FilePart) -> str:
    assert part.data is not None
    return f"data:{part.media_type};base64,{base64.b64encode(part.data).decode('ascii')}"


def convert_file(part: FilePart) -> JSONObject:
    """One file part as a content part, or a ModelAPIError when it cannot be sent."""
    media_type = part.media_type.split(";", 1)[0].strip().lower()
    options = _part_options(part)
    if media_type.startswith("image/"):
        image: JSONObject = {"url": part.url if part.data is None else _data_url(part)}
        detail = options.pop("image_detail", None) or options.pop("detail", None)
        if detail is not None:
            image["detail"] = detail
        return {"type": "image_url", "image_url": image, **options}
    if part.data is None:
        raise ModelAPIError(
            f"unsupported media type: {media_type} given by URL (the chat completions API takes files inline)",
            provider_code="unsupported_file",
            details={"unsupported_media_type": media_type, "url": part.url},
        )
    if media_type in _AUDIO_FORMATS:
        audio = {"data": base64.b64encode(part.data).decode("ascii"), "format": _AUDIO_FORMATS[media_type]}
        return {"type": "input_audio", "input_audio": audio, **options}
    if media_type.startswith("text/"):
        return {"type": "text", "text": part.data.decode("utf-8", "replace"), **options}
    file: JSONObject = {"file_data": _data_url(part)}
    if part.filename:
        file["filename"] = part.filename
    return {"type": "file", "file": file, **options}


def _tool_result_content(result: ToolResultPart) -> str:
    value = result.result
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)


def _assistant_messages(parts: list[Part], options: JSONObject) -> list[JSONObject]:
    """An assistant message, split: text and tool calls, then a `tool` message per
    result; text or calls after results start a new assistant message."""
    out: list[JSONObject] = []
    text: list[str] = []
    calls: list[JSONObject] = []

    def flush() -> None:
        if not text and not calls:
            return
        message: JSONObject = {"role": "assistant", "content": "".join(text) if text else None}
        if calls:
            message["tool_calls"] = list(calls)
        message.update(options)
        out.append(message)
        text.clear()
        calls.clear()

    for part in parts:
        if isinstance(part, TextPart):
            text.append(part.text)
        elif isinstance(part, ToolCallPart):
            args = {} if part.args is None else part.args
            calls.append(
                {
                    "id": part.tool_call_id,
                    "type": "function",
                    "function": {
                        "name": part.tool_name,
                        "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                    },
                }
            )
        elif isinstance(part, ToolResultPart):
            flush()
            out.append({"role": "tool", "tool_call_id": part.tool_call_id, "content": _tool_result_content(part)})
        elif isinstance(part, FilePart):
            raise ModelAPIError(
                f"unsupported media type: {part.media_type} in an assistant message "
                "(the chat completions API takes files from users only)",
                provider_code="unsupported_file",
                details={"unsupported_media_type": part.media_type},
            )
        # Reasoning, data and signal parts have no Chat Completions form.
    flush()
    return out


def convert_tool(tool: ToolDefinition) -> JSONObject:
    function: JSONObject = {
        "name": tool.name,
        "parameters": tool.input_schema or {"type": "object", "properties": {}},
    }
    if tool.description:
        function["description"] = tool.description
    return {"type": "function", "function": function}


def convert_tool_choice(choice: ToolChoice | None) -> str | JSONObject | None:
    if choice is None:
        return None
    if choice.mode == "tool":
        if not choice.tool_name:
            raise InvalidArgument.field("options.tool_choice.tool_name", "is required when mode is 'tool'")
        return {"type": "function", "function": {"name": choice.tool_name}}
    return choice.mode


def convert_structured_output(output: StructuredOutput) -> JSONObject:
    name = _SCHEMA_NAME.sub("_", output.name or "response")[:64] or "response"
    schema: JSONObject = {"name": name, "schema": output.schema}
    if output.description:
        schema["description"] = output.description
    return {"type": "json_schema", "json_schema": schema}


# ---------------------------------------------------------------- stream mapping


@dataclass(slots=True)
class _Call:
    id: str
    name: str = ""
    started: bool = False
    pending: list[str] = field(default_factory=list)  # fragments seen before the name
    args: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _StreamState:
    text_id: str | None = None
    reasoning_id: str | None = None
    calls: list[_Call] = field(default_factory=list)
    by_index: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: JSONObject | None = None
    metadata: JSONObject = field(default_factory=dict)

    def _end_reasoning(self) -> list[ModelEvent]:
        if self.reasoning_id is None:
            return []
        rid, self.reasoning_id = self.reasoning_id, None
        return [ReasoningEnd(rid)]

    def _end_text(self) -> list[ModelEvent]:
        if self.text_id is None:
            return []
        tid, self.text_id = self.text_id, None
        return [TextEnd(tid)]

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
            events.extend(self._end_text())
            if self.reasoning_id is None:
                self.reasoning_id = new_id("rs_")
                events.append(ReasoningStart(self.reasoning_id))
            events.append(ReasoningDelta(self.reasoning_id, reasoning))
        for key in ("content", "refusal"):
            text = delta.get(key)
            if isinstance(text, str) and text:
                events.extend(self._end_reasoning())
                if self.text_id is None:
                    self.text_id = new_id("txt_")
                    events.append(TextStart(self.text_id))
                events.append(TextDelta(self.text_id, text))
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
            events.extend(self._end_reasoning())
            events.extend(self._end_text())
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
        events: list[ModelEvent] = [*self._end_reasoning(), *self._end_text()]
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


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def convert_usage(usage: JSONObject | None) -> Usage:
    if not usage:
        return Usage()
    prompt_details = usage.get("prompt_tokens_details")
    completion_details = usage.get("completion_tokens_details")
    input_tokens = _int(usage.get("prompt_tokens"))
    output_tokens = _int(usage.get("completion_tokens"))
    total = _int(usage.get("total_tokens"))
    if total is None and input_tokens is not None and output_tokens is not None:
        total = input_tokens + output_tokens
    return Usage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total,
        reasoning_tokens=_int(completion_details.get("reasoning_tokens"))
        if isinstance(completion_details, dict)
        else None,
        cached_input_tokens=_int(prompt_details.get("cached_tokens")) if isinstance(prompt_details, dict) else None,
    )


# ---------------------------------------------------------------- errors


def _converted(exc: Exception) -> Exception:
    """The ModelAPIError for an SDK or transport failure; anything else unchanged."""
    if isinstance(exc, ModelAPIError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc)
    if isinstance(exc, openai.APITimeoutError):
        return ModelAPIError(f"the request to the openai provider timed out: {exc}", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        reason = f": {cause}" if cause is not None and str(cause) else ""
        return ModelAPIError(f"connection to the openai provider failed{reason}", retryable=True)
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        body = exc.body if isinstance(exc.body, dict) else {}
        code = exc.code or exc.type or None
        retryable = bool(code) and any(marker in str(code).lower() for marker in _TRANSIENT_CODE_MARKERS)
        return ModelAPIError(exc.message, provider_code=code, retryable=retryable, details={"error": body})
    if isinstance(exc, OSError) or type(exc).__module__.split(".", 1)[0] in _TRANSPORT_MODULES:
        return ModelAPIError(f"connection to the openai provider failed: {exc}", retryable=True)
    return exc


def status_error(exc: openai.APIStatusError) -> ModelAPIError:
    status = exc.status_code
    body = exc.body
    error = body if isinstance(body, dict) else {}
    code = error.get("code") or error.get("type")
    message = error.get("message") if isinstance(error.get("message"), str) else None
    details: JSONObject = {}
    if error:
        details["error"] = error
    elif isinstance(body, str) and body:
        details["response_body"] = body
    headers = exc.response.headers
    request_id = headers.get("x-request-id")
    if request_id:
        details["request_id"] = request_id
    delay = retry_after_ms(headers)
    if delay is not None:
        details["retry_after_ms"] = delay
    retryable = status in _RETRYABLE_STATUSES or status >= 500
    should_retry = (headers.get("x-should-retry") or "").strip().lower()
    if should_retry in ("true", "false"):
        retryable = should_retry == "true"
    return ModelAPIError(
        message or exc.message,
        status_code=status,
        provider_code=str(code) if code else None,
        retryable=retryable,
        details=details,
    )


def retry_after_ms(headers: Mapping[str, str]) -> float | None:
    """Retry-After-Ms, or Retry-After in seconds or as an HTTP date, in milliseconds."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms))
        except ValueError:
            pass
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    try:
        return max(0.0, float(raw) * 1000)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - utcnow()).total_seconds() * 1000)
