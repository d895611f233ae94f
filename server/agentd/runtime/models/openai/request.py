"""An agentd ModelRequest as a Chat Completions request (plain JSON, no SDK).

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
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, Message, Part, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.models.base import ModelAPIError, ModelRequest, ToolDefinition
from agentd.runtime.models.common import JSONObject, provider_options, snake_case
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice

log = logging.getLogger(__name__)

#: The provider's name: its key in provider options and provider metadata.
PROVIDER = "openai"

_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
}
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def openai_options(options: Mapping[str, Any] | None, where: str) -> JSONObject:
    """The `openai` entry of some provider options, its top-level keys snake_cased."""
    return {snake_case(str(k)): v for k, v in provider_options(options, PROVIDER, where).items()}


def build_params(request: ModelRequest, *, official_endpoint: bool) -> tuple[JSONObject, JSONObject]:
    """The typed request parameters and the provider options (extra body) of a call."""
    params: JSONObject = {"messages": convert_messages(request.prompt)}
    if request.tools:
        params["tools"] = [convert_tool(t) for t in request.tools]
        choice = convert_tool_choice(request.tool_choice)
        if choice is not None:
            params["tool_choice"] = choice
    if request.structured_output is not None:
        params["response_format"] = convert_structured_output(request.structured_output)
    params.update(_settings(request.settings, official_endpoint))
    # Body fields the SDK has no parameter for travel in its extra body,
    # with the provider options last so that they win.
    extra: JSONObject = {"top_k": params.pop("top_k")} if "top_k" in params else {}
    extra.update(openai_options(request.provider_options, "options.provider_options.openai"))
    return params, extra


def _settings(settings: ModelSettings, official_endpoint: bool) -> JSONObject:
    out: JSONObject = {}
    for name in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed"):
        value = getattr(settings, name)
        if value is not None:
            out[name] = value
    if settings.stop_sequences:
        out["stop"] = list(settings.stop_sequences)
    if settings.max_output_tokens is not None:
        key = "max_completion_tokens" if official_endpoint else "max_tokens"
        out[key] = settings.max_output_tokens
    if settings.top_k is not None:
        if official_endpoint:
            log.warning("openai: top_k is not supported by the OpenAI API; not sent")
        else:
            out["top_k"] = settings.top_k
    return out


def convert_messages(prompt: list[Message]) -> list[JSONObject]:
    """agentd messages as Chat Completions messages (see the module docstring)."""
    out: list[JSONObject] = []
    for index, message in enumerate(prompt):
        options = openai_options(message.provider_options, f"prompt[{index}].provider_options.openai")
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
    return openai_options(part.provider_options, f"{part.type} part provider_options.openai")


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
