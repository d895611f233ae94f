"""The `google/<model>` models: the Gemini API over the official `google-genai` SDK.

Credentials and endpoint
    The API key is GOOGLE_API_KEY, else GOOGLE_GENERATIVE_AI_API_KEY; with
    neither set, `create` fails with FAILED_PRECONDITION / CREDENTIALS_MISSING
    naming both. GOOGLE_GEMINI_BASE_URL replaces the endpoint
    (https://generativelanguage.googleapis.com/) for a proxy or a test server:
    give the root without the API version, which the adapter appends
    (`{base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).

Clients
    One SDK client per API key and endpoint, shared by runs (the SDK pools
    connections per event loop, over whichever HTTP client library it
    picks); `aclose_clients()` closes them at shutdown.

Retries
    The SDK's own retries are off: HTTP retry options at one attempt (which
    also stops its implicit reconnect-and-resend), automatic stream
    continuation off, automatic function calling off. Retrying is the error
    processors' job (StreamErrorRetryProcessor), driven by `retryable`.

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

Response mapping (Gemini -> agentd)
    text parts -> text-start/delta/end; thought parts -> reasoning (the
    thought signature on reasoning-end, as `signature` and as
    provider_metadata["google"]["thoughtSignature"], which the loop keeps as
    the reasoning part's options and so sends back; a text part's signature
    on text-end's provider metadata); a functionCall (whole in one chunk) ->
    tool-call input start, one delta with the full JSON arguments, end, then
    tool-call (the API's id,
    else a generated one; thoughtSignature and the API's id in
    provider_metadata["google"], replayed on the next request); inlineData ->
    a file chunk. Usage: promptTokenCount -> input, candidatesTokenCount +
    thoughtsTokenCount -> output, thoughtsTokenCount -> reasoning,
    cachedContentTokenCount -> cached input, totalTokenCount -> total. Finish:
    STOP -> stop (tool-calls when the step called a function), MAX_TOKENS ->
    length, SAFETY/RECITATION/BLOCKLIST/PROHIBITED_CONTENT/SPII/IMAGE_* ->
    content-filter (also a prompt blocked by promptFeedback), else other.
    A stream that ends without a finish reason is a retryable error.
    Code-execution parts (executableCode, codeExecutionResult) are not mapped.

Errors
    Every failure is a ModelAPIError: an API error keeps its HTTP code
    (`status_code`), status name (`provider_code`, e.g. RESOURCE_EXHAUSTED),
    message and JSON body (`details["body"]`); 408, 429 and 5xx are retryable; a RetryInfo delay or
    Retry-After header becomes `details["retry_after_ms"]`. Connection
    failures, a stream cut mid-way and unparsable stream data are retryable
    without a status. Cancellation propagates and closes the HTTP response.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast
from urllib.parse import unquote_to_bytes

import pydantic
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from agentd.runtime.chunks import (
    File,
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
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    new_id,
)
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelFinish, ModelRequest, ToolDefinition
from agentd.runtime.options import ToolChoice

PROVIDER = "google"
#: Read in this order; the first one set wins.
API_KEY_VARIABLES = ("GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY")
BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"
API_VERSION = "v1beta"

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
#: Exceptions from these packages are transport failures (connection, TLS,
#: a stream cut mid-way), whichever HTTP client library the SDK picked.
_TRANSPORT_PACKAGES = frozenset({"aiohttp", "httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"})
_DATA_URL = re.compile(r"^data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*),(?P<data>.*)$", re.DOTALL)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


# ---------------------------------------------------------------- clients

#: One SDK client per key and endpoint, shared by runs (it pools connections
#: per event loop); `aclose_clients()` closes them at shutdown.
_clients: dict[tuple[str, str], genai.Client] = {}


def _client(api_key: str, base_url: str) -> genai.Client:
    client = _clients.get((api_key, base_url))
    if client is None:
        client = genai.Client(
            api_key=api_key,
            vertexai=False,
            http_options=types.HttpOptions(
                base_url=base_url,
                api_version=API_VERSION,
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        _clients[(api_key, base_url)] = client
    return client


async def aclose_clients() -> None:
    """Closes the shared SDK clients (their connection pools on this loop)."""
    clients = list(_clients.values())
    _clients.clear()
    for client in clients:
        await client.aio.aclose()


# ---------------------------------------------------------------- the model


class GoogleModel:
    def __init__(self, model_id: str, *, api_key: str, base_url: str = DEFAULT_BASE_URL) -> None:
        self._model_id = model_id
        self._api_key = api_key
        self._base_url = base_url

    @classmethod
    def create(cls, model_id: str, env: Mapping[str, str] | None = None) -> GoogleModel:
        """A model for `google/<model_id>`, configured from `env` (os.environ by default)."""
        env = os.environ if env is None else env
        api_key = next((env[name].strip() for name in API_KEY_VARIABLES if env.get(name, "").strip()), "")
        if not api_key:
            names = " or ".join(API_KEY_VARIABLES)
            raise FailedPrecondition(
                f"google/{model_id} needs an API key: set {names}",
                "CREDENTIALS_MISSING",
                {"provider": PROVIDER, "variable": API_KEY_VARIABLES[0], "variables": ",".join(API_KEY_VARIABLES)},
            )
        base_url = env.get(BASE_URL_VARIABLE, "").strip() or DEFAULT_BASE_URL
        return cls(model_id, api_key=api_key, base_url=base_url)

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def spec(self) -> str:
        return f"{PROVIDER}/{self._model_id}"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Built eagerly: a request that cannot be sent fails the call, not the stream.
        options = _call_options(request.provider_options)
        contents, system = _contents(request.prompt)
        config = _config(request, system, options)
        return self._stream(contents, config)

    async def _stream(
        self, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> AsyncIterator[ModelEvent]:
        client = _client(self._api_key, self._base_url)
        state = _StreamState()
        responses: AsyncIterator[types.GenerateContentResponse] | None = None
        try:
            responses = await client.aio.models.generate_content_stream(
                model=self._model_id, contents=cast(Any, contents), config=config
            )
            async for response in responses:
                for event in state.feed(response):
                    yield event
            for event in state.finish():
                yield event
        except genai_errors.APIError as exc:
            raise _api_error(exc) from exc
        except genai_errors.UnknownApiResponseError as exc:
            raise ModelAPIError(
                f"the Gemini API sent unreadable stream data: {exc}", retryable=True, details={"cause": "bad_response"}
            ) from exc
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            raise ModelAPIError(
                f"the connection to the Gemini API failed: {type(exc).__name__}: {exc}",
                retryable=True,
                details={"cause": type(exc).__name__},
            ) from exc
        finally:
            close = getattr(responses, "aclose", None)
            if close is not None:  # on cancellation too: releases the HTTP response
                await close()


def create(model_id: str, env: Mapping[str, str] | None = None) -> GoogleModel:
    """The router's entry point: `GoogleModel.create`."""
    return GoogleModel.create(model_id, env)


# ---------------------------------------------------------------- request


def _call_options(provider_options: Mapping[str, Any]) -> dict[str, Any]:
    options = provider_options.get(PROVIDER)
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidArgument.field("options.provider_options.google", "must be an object")
    return {_camel(str(k)): v for k, v in options.items()}


def _part_options(value: Any, field: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidArgument.field(field, "must be an object")
    options = value.get(PROVIDER)
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidArgument.field(f"{field}.google", "must be an object")
    return {_camel(str(k)): v for k, v in options.items()}


def _json_value(value: Any) -> Any:
    """`value` as plain JSON (tool results may hold any Python object)."""
    return json.loads(json.dumps(value, default=str))


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
    value = _json_value(result.result)
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
                if isinstance(part, TextPart) and part.text:
                    system.append(convert({"text": part.text}, j, part.provider_options))
                elif isinstance(part, FilePart):
                    system.append(convert(_file_json(part, f"{field}.parts[{j}]"), j, part.provider_options))
            continue
        if message.role == "assistant":
            model_parts: list[types.Part] = []
            responses: list[types.Part] = []
            for j, part in enumerate(message.parts):
                if isinstance(part, ReasoningPart):
                    signed = "thoughtSignature" in _part_options(part.provider_options, f"{field}.parts[{j}]")
                    if part.text or signed:  # a signature-only thought part still carries its signature
                        model_parts.append(convert({"text": part.text, "thought": True}, j, part.provider_options))
                elif isinstance(part, TextPart):
                    if part.text:
                        model_parts.append(convert({"text": part.text}, j, part.provider_options))
                elif isinstance(part, FilePart):
                    model_parts.append(convert(_file_json(part, f"{field}.parts[{j}]"), j, part.provider_options))
                elif isinstance(part, ToolCallPart):
                    meta = _google_metadata(part)
                    call: dict[str, Any] = {"name": part.tool_name, "args": _json_value(_call_args(part.args))}
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
            if isinstance(part, TextPart):
                if part.text:
                    user_parts.append(convert({"text": part.text}, j, part.provider_options))
            elif isinstance(part, FilePart):
                user_parts.append(convert(_file_json(part, f"{field}.parts[{j}]"), j, part.provider_options))
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


# ---------------------------------------------------------------- response


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data else None


def _enum_name(value: Any) -> str | None:
    if value is None:
        return None
    return str(getattr(value, "value", value))


def _dump(model: pydantic.BaseModel | None) -> Any:
    return None if model is None else model.model_dump(mode="json", by_alias=True, exclude_none=True)


class _StreamState:
    """Turns the SDK's response chunks into agentd events."""

    def __init__(self) -> None:
        self.text_id: str | None = None
        self.text_signature: str | None = None
        self.reasoning_id: str | None = None
        self.reasoning_signature: str | None = None
        self.calls = 0
        self.finish_raw: str | None = None
        self.blocked: str | None = None
        self.usage: types.GenerateContentResponseUsageMetadata | None = None
        self.metadata: dict[str, Any] = {}

    def _close_text(self) -> list[ModelEvent]:
        if self.text_id is None:
            return []
        meta = {PROVIDER: {"thoughtSignature": self.text_signature}} if self.text_signature else None
        end = TextEnd(self.text_id, provider_metadata=meta)
        self.text_id = self.text_signature = None
        return [end]

    def _close_reasoning(self) -> list[ModelEvent]:
        if self.reasoning_id is None:
            return []
        signature = self.reasoning_signature
        # The google-scoped copy is what comes back as the reasoning part's options
        # (and so as the thought part's thoughtSignature) on the next request.
        meta = {PROVIDER: {"thoughtSignature": signature}} if signature else None
        end = ReasoningEnd(self.reasoning_id, signature=signature, provider_metadata=meta)
        self.reasoning_id = self.reasoning_signature = None
        return [end]

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
            if self.reasoning_id is None and (part.text or signature):
                self.reasoning_id = new_id("rs_")
                out.append(ReasoningStart(self.reasoning_id))
            if part.text:
                assert self.reasoning_id is not None
                out.append(ReasoningDelta(self.reasoning_id, part.text))
            self.reasoning_signature = signature or self.reasoning_signature
        elif part.text is not None:
            out.extend(self._close_reasoning())
            if self.text_id is None and part.text:
                self.text_id = new_id("txt_")
                out.append(TextStart(self.text_id))
            if part.text:
                assert self.text_id is not None
                out.append(TextDelta(self.text_id, part.text))
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
        meta = {PROVIDER: google} if google else None
        return [
            ToolCallStart(call_id, name, provider_metadata=meta),
            ToolCallDelta(call_id, json.dumps(args, separators=(",", ":")), name),
            ToolCallEnd(call_id),
            ToolCall(ToolCallPart(call_id, name, args, provider_metadata=meta)),
        ]

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


# ---------------------------------------------------------------- errors


def _is_transport_error(exc: BaseException) -> bool:
    if isinstance(exc, (OSError, TimeoutError, EOFError)):
        return True
    return any(cls.__module__.split(".")[0] in _TRANSPORT_PACKAGES for cls in type(exc).__mro__)


def _retry_after_ms(body: Any, headers: Mapping[str, str]) -> float | None:
    """The wait the API asks for: a RetryInfo detail's retryDelay ("30s"), or Retry-After."""
    error = body.get("error") if isinstance(body, dict) else None
    error_details = error.get("details") if isinstance(error, dict) else None
    for detail in error_details if isinstance(error_details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match is not None:
                return float(match.group(1)) * 1000
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return float(retry_after) * 1000
        except ValueError:
            return None
    return None


def _api_error(exc: genai_errors.APIError) -> ModelAPIError:
    code = exc.code if isinstance(exc.code, int) and not isinstance(exc.code, bool) else None
    status = exc.status if isinstance(exc.status, str) and exc.status else None
    message = exc.message if isinstance(exc.message, str) and exc.message else str(exc)
    raw_headers = getattr(getattr(exc, "response", None), "headers", None)
    headers = {str(k).lower(): str(v) for k, v in raw_headers.items()} if isinstance(raw_headers, Mapping) else {}
    body = exc.details if isinstance(exc.details, dict) else {"error": exc.details}
    details: dict[str, Any] = {"body": _json_value(body)}
    wait = _retry_after_ms(body, headers)
    if wait is not None:
        details["retry_after_ms"] = wait
    return ModelAPIError(
        message,
        status_code=code,
        provider_code=status,
        retryable=code is not None and (code in (408, 429) or 500 <= code <= 599),
        details=details,
    )
