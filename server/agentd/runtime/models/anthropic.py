"""The `anthropic/<model>` adapter: the Messages API, streamed, over the official `anthropic` SDK.

Credentials: `ANTHROPIC_API_KEY` (required: without it `create` raises
FAILED_PRECONDITION / CREDENTIALS_MISSING naming the variable);
`ANTHROPIC_BASE_URL` is honoured. The SDK's own retries are off
(`max_retries=0`): retrying is the error processors' job.

Request mapping (agentd → provider):

* system messages → `system` text blocks, in order;
* user messages → `text`, `image` (base64, data: URL or url source; jpeg, png,
  gif, webp) and `document` blocks (application/pdf as base64 or url source,
  text/* as a text source; the filename becomes the title); other media types
  raise a non-retryable ModelAPIError naming `unsupported_media_type`, which the
  unsupported-file handler understands;
* assistant messages → `thinking` (with its signature; unsigned reasoning cannot
  be sent back and is left out), `redacted_thinking`, `text` and `tool_use`
  blocks; the tool results agentd keeps in the assistant message right after its
  calls become `tool_result` blocks (`is_error` set on failures) at the start of
  the following user turn;
* consecutive turns of one role are merged (the API wants them alternating);
* provider options: per part, `providerOptions.anthropic` (keys snake-cased) is
  merged into that part's block (e.g. `cacheControl` → `cache_control`); per
  message, into the last block the message produced (so `cacheControl` on a
  system message marks that system block); per call, into the request body,
  where it wins over what the adapter computed (e.g. `thinking`), except
  `headers` (extra HTTP headers), `betas` (the `anthropic-beta` header) and
  `disableParallelToolUse` (folded into `tool_choice`). Keys are snake-cased at
  every level except inside JSON schemas (`schema`, `input_schema`,
  `properties`). Nothing under `anthropic` is dropped: a key the API does not
  know is sent and rejected by it;
* tools → `tools` with `input_schema`; tool choice auto/required/tool/none →
  `auto`/`any`/`tool`/`none`;
* settings: `max_tokens` (required by the API: 4096 when unset, plus the
  thinking budget when thinking is enabled and no maximum was set),
  `temperature`, `top_p`, `top_k`, `stop_sequences`. Presence/frequency
  penalties and seeds have no equivalent and are not sent (logged).

Structured output: not every model and API version has a native JSON-schema
mode, so it is done the portable way: a tool named after the schema (its
`name`, else "json") whose input schema is the requested schema, forced with
`tool_choice` (left on `auto` when thinking is enabled, which forbids forcing a
tool). The tool's streamed input is surfaced as the step's text (text-start /
text-delta / text-end, the JSON as the model writes it) and its `tool_use` stop
reason as `stop`, so the loop parses the object from the text. A schema whose
root is not an object is wrapped as `{"value": <schema>}` and unwrapped (the
text is then emitted once the value is complete).

Stream mapping (provider → agentd): `message_start` → response-metadata;
`text` blocks → text-start/delta/end; `thinking` → reasoning-start/delta/end with
the signature (also in provider metadata `anthropic.signature`);
`redacted_thinking` → an empty reasoning block carrying `redacted_data` (the
provider's opaque string, UTF-8 encoded); `tool_use` → tool-call streaming
start, one delta per `input_json_delta`, end, then the parsed tool-call;
`message_delta`/`message_stop` → the ModelFinish with usage (input, output,
`cache_read_input_tokens` → cached input, `cache_creation_input_tokens`, and
thinking tokens → reasoning tokens when reported) and the finish reason
(end_turn/stop_sequence → stop, max_tokens/model_context_window_exceeded →
length, tool_use → tool-calls, refusal → content-filter, anything else → other).
Other block types (server tools, citations) are not mapped.

Errors: every failure becomes one ModelAPIError. HTTP errors carry the status,
the body's `error.type` as provider code, its message, and are retryable for
408, 409, 429 and 5xx (529 overloaded included) unless the provider's
`x-should-retry` header says otherwise; `retry-after` headers are kept in
`details["headers"]`. An `error` event in the middle of a stream is mapped by its
type to the status the provider uses for it (e.g. overloaded_error → 529) and is
retryable unless it names a client error. Timeouts (`timeout`), connection
failures and a stream cut short (`connection_error`, also a stream that ends
without `message_stop`) are retryable. Cancellation propagates: cancelling the
run closes the stream and its HTTP connection.

SDK clients are shared per event loop and settings, so calls reuse pooled
connections; `close_clients()` closes those of the running loop (at shutdown).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import os
import re
import weakref
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import anthropic

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
from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.messages import (
    FilePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    new_id,
)
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelFinish, ModelRequest
from agentd.runtime.options import StructuredOutput

log = logging.getLogger(__name__)

PROVIDER = "anthropic"
API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_STRUCTURED_TOOL = "json"

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_TOOL_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: Option keys whose values are JSON schemas: their keys are the caller's, never renamed.
_VERBATIM_KEYS = frozenset({"schema", "input_schema", "properties"})
_RETRYABLE_STATUSES = frozenset({408, 409, 429})
#: The HTTP status the provider uses for each error type (for `error` events mid-stream).
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_KEPT_HEADERS = ("retry-after", "retry-after-ms", "request-id", "x-should-retry")
#: SDK clients by event loop, then by (api key, base URL, timeout): connections are
#: pooled per loop, and a loop's clients go when the loop does.
_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, float | None], anthropic.AsyncAnthropic]
] = weakref.WeakKeyDictionary()
_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
}


def create(model_id: str, env: Mapping[str, str] | None = None, *, timeout: float | None = None) -> AnthropicModel:
    """The adapter for `anthropic/<model_id>`, configured from `env` (the process
    environment when None). `timeout` (seconds) overrides the SDK's default."""
    env = os.environ if env is None else env
    api_key = (env.get(API_KEY_VARIABLE) or "").strip()
    if not api_key:
        raise FailedPrecondition(
            f"the {PROVIDER} provider needs {API_KEY_VARIABLE}: set it in agentd's environment",
            "CREDENTIALS_MISSING",
            {"variable": API_KEY_VARIABLE, "provider": PROVIDER},
        )
    base_url = (env.get(BASE_URL_VARIABLE) or "").strip() or DEFAULT_BASE_URL
    return AnthropicModel(model_id, api_key=api_key, base_url=base_url, timeout=timeout)


class AnthropicModel:
    """One `anthropic/<model>`; `stream()` makes one Messages API call."""

    def __init__(self, model_id: str, *, api_key: str, base_url: str, timeout: float | None = None) -> None:
        self._model_id = model_id
        self._api_key = api_key
        self._base_url = base_url
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

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._stream(request)

    def _client(self) -> anthropic.AsyncAnthropic:
        """The SDK client for these settings on the running loop (shared: its pool
        keeps connections for the next call)."""
        per_loop = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
        key = (self._api_key, self._base_url, self._timeout)
        client = per_loop.get(key)
        if client is None or client.is_closed():
            if self._timeout is None:
                client = anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self._base_url, max_retries=0)
            else:
                client = anthropic.AsyncAnthropic(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=self._timeout
                )
            per_loop[key] = client
        return client

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call = build_call(self._model_id, request)
        decoder = StreamDecoder(call.structured)
        client = self._client()
        stream: Any = None
        try:
            body = dict(call.body)
            try:
                stream = await client.messages.create(
                    model=body.pop("model"),
                    max_tokens=body.pop("max_tokens"),
                    messages=body.pop("messages"),
                    stream=True,
                    extra_body=body,
                    extra_headers=call.headers or None,
                )
            except anthropic.APIError as exc:
                raise api_error(exc) from exc
            events = stream.__aiter__()
            while True:
                try:
                    event = await events.__anext__()
                except StopAsyncIteration:
                    break
                except anthropic.APIError as exc:
                    raise api_error(exc) from exc
                except Exception as exc:  # the HTTP layer below the SDK: a cut or timed-out stream
                    raise transport_error(exc) from exc
                for out in decoder.feed(event):
                    yield out
            yield decoder.finish()
        finally:
            # On completion, error and cancellation alike. A response closed before
            # its end closes its connection: a cancelled run ends its HTTP request.
            if stream is not None:
                await stream.close()


async def close_clients() -> None:
    """Closes the SDK clients made on the running loop, and their pooled
    connections (for shutdown; a later call makes a new client)."""
    clients = _CLIENTS.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.close()


# ---------------------------------------------------------------- the request


@dataclass(slots=True)
class StructuredTool:
    """The forced tool that carries structured output."""

    name: str
    wrapped: bool


@dataclass(slots=True)
class Call:
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    structured: StructuredTool | None = None


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def snake_keys(value: Any) -> Any:
    """`value` with dict keys snake-cased at every level, JSON schemas excepted."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = snake(str(key))
            out[name] = item if name in _VERBATIM_KEYS else snake_keys(item)
        return out
    if isinstance(value, list):
        return [snake_keys(item) for item in value]
    return value


def _anthropic_options(options: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    if not options:
        return {}
    mine = options.get(PROVIDER)
    if mine is None:
        return {}
    if not isinstance(mine, Mapping):
        raise InvalidArgument.field(where, "must be an object")
    return cast(dict[str, Any], snake_keys(mine))


def build_call(model_id: str, request: ModelRequest) -> Call:
    """The Messages API request body (and headers) for one agentd request."""
    options = _anthropic_options(request.provider_options, "options.provider_options.anthropic")
    headers: dict[str, str] = {}
    extra_headers = options.pop("headers", None)
    if extra_headers is not None:
        if not isinstance(extra_headers, Mapping):
            raise InvalidArgument.field("options.provider_options.anthropic.headers", "must be an object")
        headers.update({str(k): str(v) for k, v in extra_headers.items()})
    betas = options.pop("betas", None)
    if betas is not None:
        if not isinstance(betas, list) or not all(isinstance(b, str) for b in betas):
            raise InvalidArgument.field("options.provider_options.anthropic.betas", "must be a list of strings")
        headers["anthropic-beta"] = ",".join(betas)
    disable_parallel = options.pop("disable_parallel_tool_use", None)
    if "stream" in options:
        raise InvalidArgument.field("options.provider_options.anthropic.stream", "the adapter always streams")

    system, messages = convert_prompt(request.prompt)
    settings = request.settings
    body: dict[str, Any] = {"model": model_id, "messages": messages}
    if system:
        body["system"] = system
    max_tokens = settings.max_output_tokens
    thinking = options.get("thinking")
    thinking_on = isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")
    if max_tokens is None:
        max_tokens = DEFAULT_MAX_TOKENS
        budget = thinking.get("budget_tokens") if isinstance(thinking, Mapping) else None
        if thinking_on and isinstance(budget, int) and not isinstance(budget, bool):
            max_tokens += budget  # room for the answer after the thinking budget
    body["max_tokens"] = max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.top_p is not None:
        body["top_p"] = settings.top_p
    if settings.top_k is not None:
        body["top_k"] = settings.top_k
    if settings.stop_sequences:
        body["stop_sequences"] = list(settings.stop_sequences)
    ignored = [
        name for name in ("presence_penalty", "frequency_penalty", "seed") if getattr(settings, name) is not None
    ]
    if ignored:
        log.warning("the %s provider has no %s; not sent", PROVIDER, ", ".join(ignored))

    tools: list[dict[str, Any]] = [
        {"name": t.name, "description": t.description, "input_schema": _object_schema(t.input_schema)}
        for t in request.tools
    ]
    tool_choice: dict[str, Any] | None = None
    choice = request.tool_choice
    if choice is not None and tools:
        if choice.mode == "required":
            tool_choice = {"type": "any"}
        elif choice.mode == "tool":
            if not choice.tool_name:
                raise InvalidArgument.field("options.tool_choice.tool_name", "names the tool to force")
            tool_choice = {"type": "tool", "name": choice.tool_name}
        elif choice.mode == "none":
            tool_choice = {"type": "none"}
        else:
            tool_choice = {"type": "auto"}
    structured: StructuredTool | None = None
    if request.structured_output is not None:
        structured, tool = _structured_tool(request.structured_output, {t["name"] for t in tools})
        tools.append(tool)
        # Extended thinking forbids forcing a tool: the model is then asked, not forced.
        tool_choice = {"type": "auto"} if thinking_on else {"type": "tool", "name": structured.name}
    if tools:
        body["tools"] = tools
    if disable_parallel is not None:
        tool_choice = {**(tool_choice or {"type": "auto"}), "disable_parallel_tool_use": bool(disable_parallel)}
    if tool_choice is not None:
        body["tool_choice"] = tool_choice
    body.update(options)  # the caller's per-call options win
    return Call(body, headers, structured)


def _object_schema(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    out = dict(schema or {})
    out.setdefault("type", "object")
    if out["type"] == "object":
        out.setdefault("properties", {})
    return out


def _structured_tool(output: StructuredOutput, taken: set[str]) -> tuple[StructuredTool, dict[str, Any]]:
    name = _TOOL_NAME_CHARS.sub("_", output.name or DEFAULT_STRUCTURED_TOOL)[:64] or DEFAULT_STRUCTURED_TOOL
    while name in taken:
        name = f"{name[:60]}_out"
    schema = dict(output.schema)
    wrapped = schema.get("type") != "object"
    if wrapped:
        schema = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
    description = output.description or "Answer with your response as this tool's input, matching its schema."
    return StructuredTool(name, wrapped), {"name": name, "description": description, "input_schema": schema}


def convert_prompt(prompt: list[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(system blocks, alternating messages) for the Messages API."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    for index, message in enumerate(prompt):
        where = f"prompt[{index}]"
        message_options = _anthropic_options(message.provider_options, f"{where}.provider_options.anthropic")
        if message.role == "system":
            blocks = [
                _with_options({"type": "text", "text": p.text}, p.provider_options, where)
                for p in message.parts
                if isinstance(p, TextPart) and p.text
            ]
            _apply_to_last(blocks, message_options)
            system.extend(blocks)
        elif message.role == "assistant":
            content, results = _assistant_blocks(message, where)
            _apply_to_last(results or content, message_options)
            add("assistant", content)
            add("user", results)
        elif message.role in ("user", "signal"):
            blocks = _user_blocks(message, where)
            _apply_to_last(blocks, message_options)
            add("user", blocks)
    return system, turns


def _with_options(block: dict[str, Any], options: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    block.update(_anthropic_options(options, f"{where}.parts.provider_options.anthropic"))
    return block


def _apply_to_last(blocks: list[dict[str, Any]], options: dict[str, Any]) -> None:
    if options and blocks:
        blocks[-1].update(options)


def _user_blocks(message: Message, where: str) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:
                blocks.append(_with_options({"type": "text", "text": part.text}, part.provider_options, where))
        elif isinstance(part, FilePart):
            blocks.append(_with_options(_file_block(part), part.provider_options, where))
        elif isinstance(part, ToolResultPart):  # results stored in a user turn are sent where they are
            blocks.append(_tool_result_block(part))
    return blocks


def _assistant_blocks(message: Message, where: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    content: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, ReasoningPart):
            block = _reasoning_block(part)
            if block is not None:
                content.append(block)
        elif isinstance(part, TextPart):
            if part.text:
                content.append(_with_options({"type": "text", "text": part.text}, part.provider_options, where))
        elif isinstance(part, ToolCallPart):
            if not part.provider_executed:
                content.append(
                    {
                        "type": "tool_use",
                        "id": part.tool_call_id,
                        "name": part.tool_name,
                        "input": _tool_input(part.args),
                    }
                )
        elif isinstance(part, ToolResultPart):
            if not part.provider_executed:
                results.append(_tool_result_block(part))
        elif isinstance(part, FilePart):
            log.warning("%s: the %s provider takes no files in assistant turns; left out", where, PROVIDER)
    return content, results


def _reasoning_block(part: ReasoningPart) -> dict[str, Any] | None:
    options = _anthropic_options(part.provider_options, "reasoning.provider_options.anthropic")
    signature = part.signature or options.pop("signature", None)
    redacted = options.pop("redacted_data", None)
    if part.redacted_data is not None:
        redacted = part.redacted_data.decode("utf-8", "replace")
    if redacted:
        return {"type": "redacted_thinking", "data": str(redacted), **options}
    if signature:
        return {"type": "thinking", "thinking": part.text, "signature": str(signature), **options}
    log.debug("reasoning without a signature cannot be sent to %s; left out", PROVIDER)
    return None


def _tool_input(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    if args is None or args == "":
        return {}
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    return {"value": args}


def _tool_result_block(part: ToolResultPart) -> dict[str, Any]:
    result = part.result
    content = result if isinstance(result, str) else json.dumps(result, default=str, ensure_ascii=False)
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_call_id, "content": content}
    if part.is_error:
        block["is_error"] = True
    return block


def _unsupported_file(media_type: str) -> ModelAPIError:
    return ModelAPIError(
        f"unsupported media type: {media_type} (the {PROVIDER} provider takes images, PDFs and text)",
        provider_code="unsupported_media_type",
        retryable=False,
        details={"unsupported_media_type": media_type, "provider": PROVIDER},
    )


def _data_url(url: str) -> tuple[str, bytes] | None:
    """(media type, bytes) of a base64 `data:` URL; None for any other URL."""
    if not url.startswith("data:"):
        return None
    header, sep, payload = url[5:].partition(",")
    if not sep or not header.endswith(";base64"):
        return None
    try:
        return header[: -len(";base64")], base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None


def _sniff_image(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _file_block(part: FilePart) -> dict[str, Any]:
    media_type = part.media_type.split(";")[0].strip().lower()
    data, url = part.data, part.url
    if data is None and url is not None:
        inline = _data_url(url)
        if inline is not None:
            media_type = inline[0].split(";")[0].strip().lower() or media_type
            data, url = inline[1], None
    if media_type in ("image/*", "image") and data is not None:
        media_type = _sniff_image(data) or media_type
    if media_type.startswith("image/"):
        if media_type not in _IMAGE_TYPES and data is not None:
            raise _unsupported_file(media_type)
        return {"type": "image", "source": _source(media_type, data, url)}
    if media_type == "application/pdf":
        block: dict[str, Any] = {"type": "document", "source": _source(media_type, data, url)}
    elif media_type.startswith("text/"):
        if data is None:
            raise _unsupported_file(f"{media_type} by URL")
        block = {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": data.decode("utf-8", "replace")},
        }
    else:
        raise _unsupported_file(media_type)
    if part.filename:
        block["title"] = part.filename
    return block


def _source(media_type: str, data: bytes | None, url: str | None) -> dict[str, Any]:
    if data is not None:
        return {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}
    if url:
        return {"type": "url", "url": url}
    raise InvalidArgument.field("file", "a file part needs data or a url")


# ---------------------------------------------------------------- the stream


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK event object (or of a plain dict)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
            value = _int(_get(usage, key))
            if value is not None:
                self.usage[key] = value
        thinking = _int(_get(_get(usage, "output_tokens_details"), "thinking_tokens"))
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
            raise ModelAPIError(
                f"the {PROVIDER} stream ended before message_stop",
                provider_code="connection_error",
                retryable=True,
                details={"provider": PROVIDER},
            )
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


# ---------------------------------------------------------------- errors


def _retryable_status(status: int | None) -> bool:
    return status is not None and (status in _RETRYABLE_STATUSES or status >= 500)


def api_error(exc: anthropic.APIError) -> ModelAPIError:
    """The one typed error for an SDK error."""
    if isinstance(exc, anthropic.APITimeoutError):
        return ModelAPIError(
            f"{PROVIDER} request timed out: {exc.message}",
            provider_code="timeout",
            retryable=True,
            details={"provider": PROVIDER},
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return ModelAPIError(
            f"{PROVIDER} connection failed: {exc.message}",
            provider_code="connection_error",
            retryable=True,
            details={"provider": PROVIDER},
        )
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    error_type = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    details: dict[str, Any] = {"provider": PROVIDER}
    if isinstance(body, (dict, str)):
        details["body"] = body
    if not isinstance(exc, anthropic.APIStatusError):
        return ModelAPIError(
            str(message or exc.message),
            provider_code=str(error_type) if error_type else None,
            retryable=False,
            details=details,
        )
    status: int | None = exc.status_code
    headers = {name: exc.response.headers[name] for name in _KEPT_HEADERS if name in exc.response.headers}
    if headers:
        details["headers"] = headers
    request_id = headers.get("request-id") or (body.get("request_id") if isinstance(body, dict) else None)
    if request_id:
        details["requestId"] = request_id
    error_code = getattr(exc, "error_code", None)
    if isinstance(error_code, str):
        details["errorCode"] = error_code
    if status is not None and status < 400:
        # An `error` event inside a stream that had started fine (HTTP 200).
        details["midStream"] = True
        details["httpStatus"] = status
        status = _ERROR_TYPE_STATUS.get(str(error_type)) if error_type else None
        retryable = status is None or _retryable_status(status)
    else:
        retryable = _retryable_status(status)
        should_retry = headers.get("x-should-retry")
        if should_retry in ("true", "false"):
            retryable = should_retry == "true"
    return ModelAPIError(
        str(message or exc.message),
        status_code=status,
        provider_code=str(error_type) if error_type else None,
        retryable=retryable,
        details=details,
    )


def transport_error(exc: Exception) -> ModelAPIError:
    """A failure below the SDK while the stream was read (a dropped or timed-out connection)."""
    name = type(exc).__name__
    timed_out = isinstance(exc, TimeoutError) or "timeout" in name.lower()
    return ModelAPIError(
        f"{PROVIDER} stream {'timed out' if timed_out else 'broke'}: {name}: {exc}",
        provider_code="timeout" if timed_out else "connection_error",
        retryable=True,
        details={"provider": PROVIDER, "exception": name},
    )
