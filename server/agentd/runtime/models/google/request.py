"""An agentd ModelRequest as the Gemini SDK's contents and config.

Request mapping (agentd -> Gemini)
    system messages       -> systemInstruction (all of them, in order)
    user text / files     -> role "user": text, inlineData (bytes or data:
                             URLs, base64) or fileData (other URLs)
    assistant messages    -> role "model": text, thought parts (reasoning),
                             inlineData/fileData, functionCall (with the
                             call's thoughtSignature and id when the API gave
                             them); the tool results kept in the same
                             assistant message become functionResponse parts
                             of the following "user" turn (the response must
                             be an object: anything else is sent as
                             {"result": value}, a failed call as {"error": value})
    adjacent turns of one role are merged into one content.
    tools                 -> tools[0].functionDeclarations, parameters as
                             parametersJsonSchema (plain JSON Schema; `$schema`
                             keys are stripped; an object schema without
                             properties sends no parameters)
    tool_choice           -> toolConfig.functionCallingConfig: auto AUTO,
                             none NONE, required ANY, tool ANY +
                             allowedFunctionNames
    structured output     -> generationConfig.responseMimeType
                             application/json + responseJsonSchema
    settings              -> generationConfig (temperature, topP, topK,
                             maxOutputTokens, presence/frequencyPenalty,
                             stopSequences, seed)

Provider options ({"google": {...}}, REST camelCase, never dropped)
    Per call: `generationConfig` is merged into generationConfig; keys that
    are generationConfig fields (thinkingConfig, responseModalities,
    mediaResolution, speechConfig, ...) go there; `tools` are appended to the
    function declarations (googleSearch, codeExecution, urlContext, ...);
    `structuredOutputs: false` sends responseMimeType without the schema (the
    one key the adapter consumes); every other key goes to the top level of
    the request (safetySettings, cachedContent, toolConfig, labels, ...),
    where the API rejects what it does not know. snake_case keys are sent
    camelCased.
    Per message and per part: the keys are merged into each Gemini part the
    message or part becomes (the part's own win over its message's), e.g.
    {"thoughtSignature": "..."} or {"mediaResolution": {...}}; a key the
    part schema does not have fails the call with INVALID_ARGUMENT.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from typing import Any, cast
from urllib.parse import unquote_to_bytes

import pydantic
from google.genai import types

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.models.base import ModelRequest, ToolDefinition
from agentd.runtime.models.common import json_value, provider_options
from agentd.runtime.options import ToolChoice

#: The provider's name: its key in provider options and provider metadata.
PROVIDER = "google"

#: generationConfig fields (REST names) that per-call options may set directly.
GENERATION_CONFIG_KEYS = frozenset(
    {
        "stopSequences",
        "responseMimeType",
        "responseSchema",
        "responseJsonSchema",
        "responseModalities",
        "candidateCount",
        "maxOutputTokens",
        "temperature",
        "topP",
        "topK",
        "seed",
        "presencePenalty",
        "frequencyPenalty",
        "responseLogprobs",
        "logprobs",
        "enableEnhancedCivicAnswers",
        "speechConfig",
        "thinkingConfig",
        "imageConfig",
        "mediaResolution",
        "audioTimestamp",
        "routingConfig",
        "modelSelectionConfig",
    }
)
#: Per-call keys the adapter itself reads (not sent).
_ADAPTER_KEYS = frozenset({"structuredOutputs"})
_TOOL_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY", "tool": "ANY"}
_DATA_URL = re.compile(r"^data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*),(?P<data>.*)$", re.DOTALL)


def build_request(request: ModelRequest) -> tuple[list[types.Content], types.GenerateContentConfig]:
    """The contents and the config of one generate_content_stream call."""
    options = _camel_keys(provider_options(request.provider_options, PROVIDER, "options.provider_options.google"))
    contents, system = _contents(request.prompt)
    return contents, _config(request, system, options)


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def _camel_keys(options: dict[str, Any]) -> dict[str, Any]:
    return {_camel(str(k)): v for k, v in options.items()}


def _part_options(value: Any, field: str) -> dict[str, Any]:
    if value is not None and not isinstance(value, Mapping):
        raise InvalidArgument.field(field, "must be an object")
    return _camel_keys(provider_options(value, PROVIDER, f"{field}.google"))


def _file_json(part: FilePart, field: str) -> dict[str, Any]:
    if part.data is not None:
        return {"inlineData": {"mimeType": part.media_type, "data": base64.b64encode(part.data).decode("ascii")}}
    url = part.url or ""
    match = _DATA_URL.match(url)
    if match is not None:
        params = match.group("params").split(";")
        raw = match.group("data")
        try:
            data = base64.b64decode(raw, validate=True) if "base64" in params else unquote_to_bytes(raw)
        except (binascii.Error, ValueError):
            raise InvalidArgument.field(f"{field}.url", "is a data: URL that does not decode") from None
        media_type = part.media_type or match.group("type") or "application/octet-stream"
        return {"inlineData": {"mimeType": media_type, "data": base64.b64encode(data).decode("ascii")}}
    return {"fileData": {"fileUri": url, "mimeType": part.media_type}}


def _google_metadata(part: ToolCallPart | ToolResultPart) -> dict[str, Any]:
    meta = (part.provider_metadata or {}).get(PROVIDER)
    return meta if isinstance(meta, dict) else {}


def _call_args(args: Any) -> dict[str, Any]:
    """functionCall.args is an object: no arguments are {}, a non-object is {"value": args}."""
    if isinstance(args, dict):
        return args
    return {} if args is None else {"value": args}


def _function_response(result: ToolResultPart, call_ids: Mapping[str, str | None]) -> dict[str, Any]:
    value = json_value(result.result)
    if result.is_error:
        response: Any = {"error": value}
    elif isinstance(value, dict):
        response = value
    else:
        response = {"result": value}
    body: dict[str, Any] = {"name": result.tool_name, "response": response}
    call_id = _google_metadata(result).get("functionCallId") or call_ids.get(result.tool_call_id)
    if call_id:
        body["id"] = call_id
    return {"functionResponse": body}


def _validated_part(part: dict[str, Any], field: str) -> types.Part:
    try:
        return types.Part.model_validate_json(json.dumps(part))
    except pydantic.ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise InvalidArgument.field(field, f"not a valid Gemini part ({problems})") from None


class _Turns:
    """Gemini contents being built: adjacent turns of one role merge."""

    def __init__(self) -> None:
        self.contents: list[types.Content] = []

    def add(self, role: str, parts: list[types.Part]) -> None:
        if not parts:
            return
        if self.contents and self.contents[-1].role == role:
            previous = self.contents[-1].parts
            assert previous is not None
            previous.extend(parts)
        else:
            self.contents.append(types.Content(role=role, parts=parts))


class _PartConverter:
    """Validated Gemini parts of one message, its and each part's google options merged in."""

    def __init__(self, field: str, defaults: dict[str, Any]) -> None:
        self.field = field
        self.defaults = defaults

    def __call__(self, part_json: dict[str, Any], j: int, options: Any) -> types.Part:
        own = _part_options(options, f"{self.field}.parts[{j}].provider_options")
        return _validated_part({**part_json, **self.defaults, **own}, f"{self.field}.parts[{j}]")

    def content(self, part: TextPart | FilePart, j: int) -> list[types.Part]:
        """A text or file part as Gemini parts: none for empty text."""
        if isinstance(part, TextPart):
            return [self({"text": part.text}, j, part.provider_options)] if part.text else []
        return [self(_file_json(part, f"{self.field}.parts[{j}]"), j, part.provider_options)]


def _contents(prompt: list[Message]) -> tuple[list[types.Content], types.Content | None]:
    system: list[types.Part] = []
    turns = _Turns()
    # The API's functionCall ids, by agentd tool call id (for the matching functionResponse).
    call_ids: dict[str, str | None] = {}
    for i, message in enumerate(prompt):
        field = f"messages[{i}]"
        convert = _PartConverter(field, _part_options(message.provider_options, f"{field}.provider_options"))
        if message.role == "system":
            for j, part in enumerate(message.parts):
                if isinstance(part, (TextPart, FilePart)):
                    system.extend(convert.content(part, j))
            continue
        if message.role == "assistant":
            model_parts: list[types.Part] = []
            responses: list[types.Part] = []
            for j, part in enumerate(message.parts):
                if isinstance(part, ReasoningPart):
                    signed = "thoughtSignature" in _part_options(part.provider_options, f"{field}.parts[{j}]")
                    if part.text or signed:  # a signature-only thought part still carries its signature
                        model_parts.append(convert({"text": part.text, "thought": True}, j, part.provider_options))
                elif isinstance(part, (TextPart, FilePart)):
                    model_parts.extend(convert.content(part, j))
                elif isinstance(part, ToolCallPart):
                    meta = _google_metadata(part)
                    call: dict[str, Any] = {"name": part.tool_name, "args": json_value(_call_args(part.args))}
                    if meta.get("functionCallId"):
                        call["id"] = meta["functionCallId"]
                    call_ids[part.tool_call_id] = meta.get("functionCallId")
                    call_json: dict[str, Any] = {"functionCall": call}
                    if meta.get("thoughtSignature"):
                        call_json["thoughtSignature"] = meta["thoughtSignature"]
                    model_parts.append(convert(call_json, j, None))
                elif isinstance(part, ToolResultPart):
                    responses.append(_validated_part(_function_response(part, call_ids), f"{field}.parts[{j}]"))
            turns.add("model", model_parts)
            turns.add("user", responses)
            continue
        user_parts: list[types.Part] = []
        for j, part in enumerate(message.parts):
            if isinstance(part, (TextPart, FilePart)):
                user_parts.extend(convert.content(part, j))
            elif isinstance(part, ToolResultPart):
                user_parts.append(_validated_part(_function_response(part, call_ids), f"{field}.parts[{j}]"))
        turns.add("user", user_parts)
    return turns.contents, (types.Content(parts=system) if system else None)


def _json_schema(schema: Any) -> Any:
    """A JSON schema as parametersJsonSchema/responseJsonSchema take it: without `$schema`."""
    if isinstance(schema, dict):
        return {k: _json_schema(v) for k, v in schema.items() if k != "$schema"}
    if isinstance(schema, list):
        return [_json_schema(v) for v in schema]
    return schema


def _parameters(schema: dict[str, Any]) -> Any:
    cleaned = _json_schema(schema)
    if not cleaned or (
        cleaned.get("type") == "object"
        and not cleaned.get("properties")
        and set(cleaned) <= {"type", "properties", "additionalProperties", "required"}
    ):
        return None  # no parameters
    return cleaned


def _declarations(tools: list[ToolDefinition]) -> types.Tool:
    return types.Tool(
        function_declarations=[
            types.FunctionDeclaration(
                name=tool.name,
                description=tool.description or None,
                parameters_json_schema=_parameters(tool.input_schema),
            )
            for tool in tools
        ]
    )


def _tool_config(choice: ToolChoice) -> types.ToolConfig:
    names = [choice.tool_name] if choice.mode == "tool" and choice.tool_name else None
    return types.ToolConfig(
        function_calling_config=types.FunctionCallingConfig(
            mode=cast(Any, _TOOL_MODES[choice.mode]), allowed_function_names=names
        )
    )


def _config(
    request: ModelRequest, system: types.Content | None, options: dict[str, Any]
) -> types.GenerateContentConfig:
    settings = request.settings
    tools: list[types.Tool] = []
    if request.tools:
        tools.append(_declarations(request.tools))
    extra_tools = options.get("tools")
    if extra_tools is not None:
        if not isinstance(extra_tools, list):
            raise InvalidArgument.field("options.provider_options.google.tools", "must be a list of tools")
        for i, tool in enumerate(extra_tools):
            try:
                tools.append(types.Tool.model_validate_json(json.dumps(tool)))
            except pydantic.ValidationError as exc:
                raise InvalidArgument.field(
                    f"options.provider_options.google.tools[{i}]",
                    f"not a valid Gemini tool ({exc.error_count()} errors)",
                ) from None
    fields: dict[str, Any] = {
        "system_instruction": system,
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k,
        "max_output_tokens": settings.max_output_tokens,
        "presence_penalty": settings.presence_penalty,
        "frequency_penalty": settings.frequency_penalty,
        "stop_sequences": list(settings.stop_sequences) or None,
        "seed": settings.seed,
        "tools": tools or None,
        "tool_config": _tool_config(request.tool_choice) if request.tools and request.tool_choice else None,
        "automatic_function_calling": types.AutomaticFunctionCallingConfig(disable=True),
    }
    structured = request.structured_output
    if structured is not None:
        fields["response_mime_type"] = "application/json"
        if options.get("structuredOutputs", True) is not False:
            schema = _json_schema(structured.schema)
            if structured.description and isinstance(schema, dict) and "description" not in schema:
                schema = {**schema, "description": structured.description}
            fields["response_json_schema"] = schema
    if "automatic_continuation" in types.GenerateContentConfig.model_fields:
        fields["automatic_continuation"] = False  # a cut stream is an error, never silently resumed
    extra = _extra_body(options)
    if extra:
        fields["http_options"] = types.HttpOptions(extra_body=extra)
    return types.GenerateContentConfig(**{k: v for k, v in fields.items() if v is not None})


def _extra_body(options: dict[str, Any]) -> dict[str, Any]:
    """The per-call options as REST request fields, merged into the body the SDK builds."""
    body: dict[str, Any] = {}
    generation: dict[str, Any] = {}
    for key, value in options.items():
        if key in _ADAPTER_KEYS or key == "tools":
            continue
        if key == "generationConfig":
            if not isinstance(value, dict):
                raise InvalidArgument.field("options.provider_options.google.generationConfig", "must be an object")
            generation.update(value)
        elif key in GENERATION_CONFIG_KEYS:
            generation[key] = value
        else:
            body[key] = value
    if generation:
        body["generationConfig"] = generation
    return body
