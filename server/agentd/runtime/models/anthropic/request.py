"""An agentd ModelRequest as a Messages API request body and headers (plain JSON, no SDK).

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
`tool_choice` (`any` when the agent's tools are offered too, so the model
calls one of them or answers; left on `auto` when thinking is enabled, which
forbids forcing a tool). `events` surfaces the tool's input as the step's text. A schema whose
root is not an object is wrapped as `{"value": <schema>}`.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.models.base import ModelAPIError, ModelRequest
from agentd.runtime.models.common import provider_options, snake_case
from agentd.runtime.options import StructuredOutput

log = logging.getLogger(__name__)

#: The provider's name: its key in provider options and provider metadata.
PROVIDER = "anthropic"
DEFAULT_MAX_TOKENS = 4096
DEFAULT_STRUCTURED_TOOL = "json"

_IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_TOOL_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
#: Option keys whose values are JSON schemas: their keys are the caller's, never renamed.
_VERBATIM_KEYS = frozenset({"schema", "input_schema", "properties"})


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


def snake_keys(value: Any) -> Any:
    """`value` with dict keys snake-cased at every level, JSON schemas excepted."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = snake_case(str(key))
            out[name] = item if name in _VERBATIM_KEYS else snake_keys(item)
        return out
    if isinstance(value, list):
        return [snake_keys(item) for item in value]
    return value


def anthropic_options(options: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    """The `anthropic` entry of some provider options, snake-cased (see snake_keys)."""
    return cast(dict[str, Any], snake_keys(provider_options(options, PROVIDER, where)))


def build_call(model_id: str, request: ModelRequest) -> Call:
    """The Messages API request body (and headers) for one agentd request."""
    options = anthropic_options(request.provider_options, "options.provider_options.anthropic")
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
        offered = bool(tools)
        tools.append(tool)
        # Extended thinking forbids forcing a tool: the model is then asked, not forced.
        # Beside the agent's tools the model must call one: a real one, or the answer tool.
        if thinking_on:
            tool_choice = {"type": "auto"}
        else:
            tool_choice = {"type": "any"} if offered else {"type": "tool", "name": structured.name}
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
        message_options = anthropic_options(message.provider_options, f"{where}.provider_options.anthropic")
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
    block.update(anthropic_options(options, f"{where}.parts.provider_options.anthropic"))
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
    options = anthropic_options(part.provider_options, "reasoning.provider_options.anthropic")
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
