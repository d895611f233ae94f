"""The google/ adapter: the real agent loop, the real router and the real
google-genai SDK against a local server speaking the Gemini API's streaming wire
format (server-sent events from streamGenerateContent?alt=sse), pointed at by
GOOGLE_GEMINI_BASE_URL."""

from __future__ import annotations

import asyncio
import base64
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, Message, ModelSettings, tool
from agentd.runtime.chunks import Chunk
from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.messages import FilePart, TextPart
from agentd.runtime.models import google, router
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.google import GoogleModel
from agentd.runtime.models.google import adapter as google_adapter
from agentd.runtime.options import StructuredOutput, ToolChoice
from fakes.google_server import (
    ErrorReply,
    GoogleServer,
    RecordedRequest,
    StreamReply,
    call_part,
    chunk,
    error_body,
    error_reply,
    inline_part,
    reply_text,
    text_part,
    usage,
)
from support.providers import RecordErrors
from support.runs import run

# The SDK subclasses its HTTP library's session class, which that library warns about.
pytestmark = pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
MODEL = "google/gemini-test"


# ---------------------------------------------------------------- fixtures and helpers


@pytest.fixture
async def server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[GoogleServer]:
    async with GoogleServer() as fake:
        monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
        monkeypatch.delenv("GOOGLE_GENERATIVE_AI_API_KEY", raising=False)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake.base_url)
        try:
            yield fake
        finally:
            await google.aclose_clients()


@pytest.fixture(params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The SDK's async HTTP client library (it has two, picked by what is installed): both are covered."""
    from google.genai import _api_client

    if not hasattr(_api_client, "has_aiohttp"):
        pytest.skip("this SDK version picks its HTTP client differently")
    if request.param == "aiohttp" and not _api_client.has_aiohttp:
        pytest.skip("the SDK's first-choice HTTP library is not installed")
    if request.param == "httpx":
        monkeypatch.setattr(_api_client, "has_aiohttp", False)
    return str(request.param)


def agent(**fields: Any) -> Agent:
    fields.setdefault("instructions", "Be brief.")
    return Agent(id="gemini", model=MODEL, **fields)


def types_of(chunks: list[Chunk]) -> list[str]:
    return [c.type for c in chunks]


def camel(value: Any) -> Any:
    """A request body with every key camelCased: the SDK writes some nested
    fields in snake_case (the API takes both), differently across versions."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel(v) for v in value]
    return value


def body(request: RecordedRequest) -> Any:
    return camel(request.body)


# ---------------------------------------------------------------- streaming


async def test_a_plain_reply_streams_as_deltas(server: GoogleServer, transport: str) -> None:
    server.push(reply_text("Hel", "lo ", "world", usage_metadata=usage(4, 3)))
    result, chunks = await run(agent())

    assert result.error is None
    assert types_of(chunks) == [
        "start",
        "step-start",
        "text-start",
        "text-delta",
        "text-delta",
        "text-delta",
        "text-end",
        "step-finish",
        "finish",
    ]
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ["Hel", "lo ", "world"]  # type: ignore[union-attr]
    assert result.text == "Hello world"
    assert result.finish_reason == "stop"
    assert result.model == MODEL

    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/v1beta/models/gemini-test:streamGenerateContent"
    assert request.query == {"alt": "sse"}
    assert request.headers["x-goog-api-key"] == "test-key"
    sent = body(request)
    assert sent["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    assert "tools" not in sent and "toolConfig" not in sent


async def test_reasoning_streams_from_thought_parts(server: GoogleServer) -> None:
    server.push(
        StreamReply(
            [
                chunk(text_part("Let me ", thought=True)),
                chunk(text_part("think.", thought=True, signature="c2lnLXI=")),
                chunk(text_part("Answer."), finish="STOP", usage_metadata=usage(2, 1, thoughts=5)),
            ]
        )
    )
    result, chunks = await run(agent())

    assert types_of(chunks)[2:9] == [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
        "text-end",
    ]
    end = next(c.payload for c in chunks if c.type == "reasoning-end")
    assert end.signature == "c2lnLXI="  # type: ignore[union-attr]
    assert end.provider_metadata == {"google": {"thoughtSignature": "c2lnLXI="}}  # type: ignore[union-attr]
    assert result.reasoning_text == "Let me think."
    assert result.text == "Answer."
    assert result.usage.reasoning_tokens == 5
    assert result.usage.output_tokens == 6


async def test_a_tool_loop(server: GoogleServer) -> None:
    calls: list[Any] = []

    @tool(
        "weather",
        "The weather in a city",
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    )
    def weather(args: Any) -> str:
        calls.append(args)
        return f"sunny in {args['city']}"

    @tool("clock", "The time")
    def clock(args: Any) -> dict[str, str]:
        return {"time": "noon"}

    server.push(
        StreamReply(
            [
                chunk(text_part("Checking.", thought=True, signature="c2lnLXQ=")),
                chunk(
                    call_part("weather", {"city": "Paris"}, signature="c2lnLTE="),
                    call_part("clock", {}, id="fc-2"),
                    finish="STOP",
                    usage_metadata=usage(9, 4),
                ),
            ]
        ),
        reply_text("Sunny ", "at noon."),
    )
    result, chunks = await run(agent(tools=[weather, clock]))

    assert result.error is None
    assert calls == [{"city": "Paris"}]
    assert result.text == "Sunny at noon."
    assert [s.finish_reason for s in result.steps] == ["tool-calls", "stop"]
    first_step = types_of(chunks)[: types_of(chunks).index("step-finish")]
    assert first_step[2:] == [
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-call-input-streaming-start",
        "tool-call-delta",
        "tool-call-input-streaming-end",
        "tool-call",
        "tool-call-input-streaming-start",
        "tool-call-delta",
        "tool-call-input-streaming-end",
        "tool-call",
        "tool-result",
        "tool-result",
    ]
    deltas = [c.payload for c in chunks if c.type == "tool-call-delta"]
    assert [d.args_text_delta for d in deltas] == ['{"city":"Paris"}', "{}"]  # type: ignore[union-attr]
    weather_call, clock_call = result.tool_calls
    assert weather_call.tool_call_id  # generated: the API gave none
    assert weather_call.provider_metadata == {"google": {"thoughtSignature": "c2lnLTE="}}
    assert clock_call.tool_call_id == "fc-2"
    assert [r.result for r in result.tool_results] == ["sunny in Paris", {"time": "noon"}]

    first, second = server.requests
    (declarations,) = body(first)["tools"]
    weather_decl, clock_decl = declarations["functionDeclarations"]
    assert weather_decl["name"] == "weather"
    assert weather_decl["description"] == "The weather in a city"
    assert weather_decl["parametersJsonSchema"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    assert clock_decl["name"] == "clock"
    assert "parametersJsonSchema" not in clock_decl

    user, model, responses, *rest = body(second)["contents"]
    assert rest == []
    assert user == {"role": "user", "parts": [{"text": "hi"}]}
    assert model == {
        "role": "model",
        "parts": [
            {"text": "Checking.", "thought": True, "thoughtSignature": "c2lnLXQ="},
            {"functionCall": {"name": "weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2lnLTE="},
            {"functionCall": {"id": "fc-2", "name": "clock", "args": {}}},
        ],
    }
    assert responses == {
        "role": "user",
        "parts": [
            {"functionResponse": {"name": "weather", "response": {"result": "sunny in Paris"}}},
            {"functionResponse": {"id": "fc-2", "name": "clock", "response": {"time": "noon"}}},
        ],
    }


async def test_tool_choice_maps_to_function_calling_config(server: GoogleServer) -> None:
    @tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}})
    def lookup(args: Any) -> str:
        return "found"

    choices = [
        (ToolChoice("auto"), {"mode": "AUTO"}),
        (ToolChoice("none"), {"mode": "NONE"}),
        (ToolChoice("required"), {"mode": "ANY"}),
        (ToolChoice("tool", "lookup"), {"mode": "ANY", "allowedFunctionNames": ["lookup"]}),
    ]
    for choice, expected in choices:
        server.push(reply_text("ok"))
        result, _ = await run(agent(tools=[lookup]), options=ExecutionOptions(tool_choice=choice))
        assert result.error is None
        assert body(server.requests[-1])["toolConfig"] == {"functionCallingConfig": expected}


async def test_image_and_file_parts(server: GoogleServer) -> None:
    data_url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    prompt = Message(
        role="user",
        parts=[
            TextPart("What is in these?"),
            FilePart("image/png", data=PNG),
            FilePart("application/pdf", url="https://generativelanguage.googleapis.com/v1beta/files/report"),
            FilePart("image/png", url=data_url),
        ],
    )
    drawn = base64.b64encode(b"GIF89a").decode()
    server.push(
        StreamReply(
            [
                chunk(text_part("A chart. Here it is again:")),
                chunk(inline_part("image/gif", drawn), finish="STOP", usage_metadata=usage(300, 20)),
            ]
        )
    )
    result, chunks = await run(agent(), [prompt])

    assert result.error is None
    (file_chunk,) = [c.payload for c in chunks if c.type == "file"]
    assert file_chunk.file.media_type == "image/gif"  # type: ignore[union-attr]
    assert file_chunk.file.data == b"GIF89a"  # type: ignore[union-attr]

    (content,) = body(server.requests[0])["contents"]
    text, inline, by_url, from_data_url = content["parts"]
    assert text == {"text": "What is in these?"}
    blob = inline["inlineData"]
    assert blob["mimeType"] == "image/png"
    assert base64.b64decode(blob["data"]) == PNG
    assert by_url == {
        "fileData": {
            "fileUri": "https://generativelanguage.googleapis.com/v1beta/files/report",
            "mimeType": "application/pdf",
        }
    }
    assert base64.b64decode(from_data_url["inlineData"]["data"]) == PNG


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("STOP", "stop"),
        ("MAX_TOKENS", "length"),
        ("SAFETY", "content-filter"),
        ("RECITATION", "content-filter"),
        ("BLOCKLIST", "content-filter"),
        ("PROHIBITED_CONTENT", "content-filter"),
        ("OTHER", "other"),
        ("MALFORMED_FUNCTION_CALL", "other"),
    ],
)
async def test_usage_and_finish_reason(server: GoogleServer, raw: str, reason: str) -> None:
    server.push(reply_text("Some", " text", finish=raw, usage_metadata=usage(10, 5, cached=4, thoughts=3, total=18)))
    result, chunks = await run(agent())

    assert result.error is None
    assert result.finish_reason == reason
    assert result.raw_finish_reason == raw
    step_finish = next(c.payload for c in chunks if c.type == "step-finish")
    assert step_finish.finish_reason == reason  # type: ignore[union-attr]
    usage_ = result.usage
    assert (usage_.input_tokens, usage_.output_tokens, usage_.total_tokens) == (10, 8, 18)
    assert (usage_.reasoning_tokens, usage_.cached_input_tokens) == (3, 4)
    assert result.total_usage.input_tokens == 10


async def test_a_blocked_prompt_finishes_as_content_filter(server: GoogleServer) -> None:
    server.push(StreamReply([{"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": usage(7, 0)}]))
    result, _ = await run(agent())

    assert result.error is None
    assert result.text == ""
    assert result.finish_reason == "content-filter"
    assert result.raw_finish_reason == "SAFETY"


async def test_structured_output(server: GoogleServer) -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    server.push(reply_text('{"city":', '"Paris"}'))
    result, _ = await run(agent(), options=ExecutionOptions(structured_output=StructuredOutput(schema)))

    assert result.object == {"city": "Paris"}
    generation = body(server.requests[0])["generationConfig"]
    assert generation["responseMimeType"] == "application/json"
    assert generation["responseJsonSchema"] == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }


# ---------------------------------------------------------------- provider options


async def test_provider_options_reach_the_request_body(server: GoogleServer) -> None:
    video = Message(
        role="user",
        parts=[
            TextPart("Describe the clip and the picture."),
            FilePart("video/mp4", url="https://www.youtube.com/watch?v=clip"),
            FilePart(
                "image/png",
                data=PNG,
                provider_options={"google": {"mediaResolution": {"level": "MEDIA_RESOLUTION_HIGH"}}},
            ),
        ],
        provider_options={"google": {"videoMetadata": {"fps": 2}}},
    )
    options = ExecutionOptions(
        model_settings=ModelSettings(
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            max_output_tokens=256,
            presence_penalty=0.1,
            frequency_penalty=0.3,
            stop_sequences=("END",),
            seed=7,
        ),
        provider_options={
            "google": {
                "thinkingConfig": {"thinkingBudget": 128, "includeThoughts": True},
                "response_modalities": ["TEXT"],
                "generationConfig": {"candidateCount": 1},
                "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}],
                "cachedContent": "cachedContents/abc",
                "tools": [{"googleSearch": {}}],
            },
            "anthropic": {"ignored": "by the google adapter"},
        },
    )
    server.push(reply_text("A cat."))
    result, _ = await run(agent(), [video], options)

    assert result.error is None
    sent = body(server.requests[0])
    assert sent["generationConfig"] == {
        "temperature": 0.2,
        "topP": 0.9,
        "topK": 40,
        "maxOutputTokens": 256,
        "presencePenalty": 0.1,
        "frequencyPenalty": 0.3,
        "stopSequences": ["END"],
        "seed": 7,
        "thinkingConfig": {"thinkingBudget": 128, "includeThoughts": True},
        "responseModalities": ["TEXT"],
        "candidateCount": 1,
    }
    assert sent["safetySettings"] == [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
    assert sent["cachedContent"] == "cachedContents/abc"
    assert sent["tools"] == [{"googleSearch": {}}]
    (content,) = sent["contents"]
    text, clip, picture = content["parts"]
    for part in (text, clip, picture):  # message-level options reach every part of the message
        assert part["videoMetadata"] == {"fps": 2}
    assert picture["mediaResolution"] == {"level": "MEDIA_RESOLUTION_HIGH"}
    assert "mediaResolution" not in clip


async def test_system_message_options_reach_the_system_instruction(server: GoogleServer) -> None:
    system = Message.system("Be brief.", {"google": {"thoughtSignature": base64.b64encode(b"sig").decode()}})
    server.push(reply_text("ok"))
    result, _ = await run(agent(instructions=[system]))

    assert result.error is None
    assert body(server.requests[0])["systemInstruction"] == {
        "parts": [{"text": "Be brief.", "thoughtSignature": base64.b64encode(b"sig").decode()}]
    }


async def test_an_unknown_part_option_fails_the_call_instead_of_being_dropped(server: GoogleServer) -> None:
    prompt = Message(role="user", parts=[TextPart("hi", provider_options={"google": {"notAPartField": 1}})])
    with pytest.raises(InvalidArgument) as caught:
        await agent().generate([prompt])

    assert "messages[1].parts[0]" in str(caught.value)
    assert "notAPartField" in str(caught.value)
    assert server.requests == []


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("status", "status_name", "retryable"),
    [
        (400, "INVALID_ARGUMENT", False),
        (401, "UNAUTHENTICATED", False),
        (403, "PERMISSION_DENIED", False),
        (429, "RESOURCE_EXHAUSTED", True),
        (500, "INTERNAL", True),
        (503, "UNAVAILABLE", True),
    ],
)
async def test_each_error_class_reaches_process_api_error(
    server: GoogleServer, transport: str, status: int, status_name: str, retryable: bool
) -> None:
    server.push(error_reply(status, f"fake {status_name.lower()}", status_name))
    recorder = RecordErrors()
    result, _ = await run(agent(error_processors=[recorder], error_processor_defaults=False))

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert error.status_code == status
    assert error.provider_code == status_name
    assert error.retryable is retryable
    assert error.message == f"fake {status_name.lower()}"
    assert error.details["body"] == error_body(status, f"fake {status_name.lower()}", status_name)
    assert result.error is not None
    assert (result.error.reason, result.error.status_code, result.error.provider_code) == (
        "MODEL_ERROR",
        status,
        status_name,
    )
    assert result.error.retryable is retryable
    assert len(server.requests) == 1  # the SDK did not retry


async def test_a_retry_delay_from_the_api_reaches_the_error_details(server: GoogleServer) -> None:
    body = error_body(429, "quota", "RESOURCE_EXHAUSTED")
    body["error"]["details"] = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]
    server.push(ErrorReply(429, body))
    recorder = RecordErrors()
    await run(agent(error_processors=[recorder], error_processor_defaults=False))

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert error.details["retry_after_ms"] == 2000


@pytest.mark.parametrize("how", ["disconnect", "error-event"])
async def test_a_stream_broken_mid_way_is_retryable(server: GoogleServer, transport: str, how: str) -> None:
    chunks_ = [chunk(text_part("Hel")), chunk(text_part("lo"), finish="STOP", usage_metadata=usage(1, 1))]
    if how == "disconnect":
        server.push(StreamReply(chunks_, disconnect_after=1))
    else:
        server.push(StreamReply([chunks_[0], error_body(503, "overloaded", "UNAVAILABLE")]))
    recorder = RecordErrors()
    result, chunks = await run(agent(error_processors=[recorder], error_processor_defaults=False))

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert error.retryable is True
    if how == "disconnect":
        assert error.status_code is None
    else:
        assert (error.status_code, error.provider_code, error.message) == (503, "UNAVAILABLE", "overloaded")
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ["Hel"]  # type: ignore[union-attr]
    assert result.error is not None and result.error.retryable is True
    assert len(server.requests) == 1


async def test_a_stream_without_a_finish_reason_is_retryable(server: GoogleServer) -> None:
    server.push(StreamReply([chunk(text_part("Hel"))]))  # ends cleanly, but early
    recorder = RecordErrors()
    result, _ = await run(agent(error_processors=[recorder], error_processor_defaults=False))

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError) and error.retryable is True
    assert result.error is not None


async def test_one_500_then_success_with_the_default_error_processors(server: GoogleServer, transport: str) -> None:
    server.push(error_reply(500), reply_text("Recovered."))
    result, _ = await run(agent())

    assert result.error is None
    assert result.text == "Recovered."
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body

    # Without the defaults nothing retries: not the loop, not the SDK.
    server.push(error_reply(500), reply_text("Recovered."))
    result, _ = await run(agent(), options=ExecutionOptions(error_processor_defaults=False))

    assert result.error is not None
    assert (result.error.status_code, result.error.retryable) == (500, True)
    assert len(server.requests) == 3


async def test_a_connection_failure_is_retryable(server: GoogleServer) -> None:
    await server.close()  # nothing listens on the port any more
    recorder = RecordErrors()
    result, _ = await run(agent(error_processors=[recorder], error_processor_defaults=False))

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert (error.status_code, error.retryable) == (None, True)
    assert result.error is not None and result.error.reason == "MODEL_ERROR"


# ---------------------------------------------------------------- cancellation


async def test_cancellation_closes_the_http_request(server: GoogleServer, transport: str) -> None:
    server.push(StreamReply([chunk(text_part("Hel")), chunk(text_part("lo"))], hang_after=1))
    handle = agent().stream("hi")
    seen: list[str] = []
    async for c in handle:
        seen.append(c.type)
        if c.type == "text-delta":
            assert handle.abort("ABORTED", "stop")

    (request,) = server.requests
    await asyncio.wait_for(request.disconnected.wait(), 5)
    result = await handle.result()
    assert result.aborted is not None
    assert seen[-1] == "abort"


# ---------------------------------------------------------------- credentials


async def test_missing_credentials_fail_the_run_with_credentials_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENERATIVE_AI_API_KEY", raising=False)

    with pytest.raises(FailedPrecondition) as caught:
        await agent().generate("hi")

    assert caught.value.reason == "CREDENTIALS_MISSING"
    assert "GOOGLE_API_KEY" in caught.value.message
    assert "GOOGLE_GENERATIVE_AI_API_KEY" in caught.value.message
    assert caught.value.metadata["provider"] == "google"


def test_create_reads_either_key_variable_and_the_base_url() -> None:
    with pytest.raises(FailedPrecondition):
        GoogleModel.create("gemini-test", env={"GOOGLE_API_KEY": "  "})
    model = GoogleModel.create("gemini-test", env={"GOOGLE_GENERATIVE_AI_API_KEY": "k2"})
    assert (model.provider, model.model_id, model.spec) == ("google", "gemini-test", "google/gemini-test")
    assert model._api_key == "k2"
    assert model._base_url == google_adapter.DEFAULT_BASE_URL
    model = GoogleModel.create(
        "gemini-test",
        env={"GOOGLE_API_KEY": "k1", "GOOGLE_GENERATIVE_AI_API_KEY": "k2", "GOOGLE_GEMINI_BASE_URL": "http://h:1"},
    )
    assert (model._api_key, model._base_url) == ("k1", "http://h:1")


def test_the_router_resolves_google_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    model = router.resolve_model(MODEL)
    assert isinstance(model, GoogleModel)
    assert google.create("gemini-test", {"GOOGLE_API_KEY": "k"}).spec == MODEL
