"""The `openai/...` adapter: the real SDK against a local server speaking the
provider's streaming wire format, driven through the real agent loop."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, FailedPrecondition, Message, ModelSettings, ToolChoice, tool
from agentd.runtime.messages import FilePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.models import openai as openai_adapter
from agentd.runtime.models.base import ModelAPIError, ModelRequest, ToolDefinition
from agentd.runtime.models.openai import request as openai_request
from agentd.runtime.models.openai.events import StreamState
from agentd.runtime.options import StructuredOutput
from fakes.openai_server import (
    ErrorReply,
    FakeOpenAIServer,
    SSEReply,
    chunk,
    error_body,
    text_chunks,
    text_reply,
    tool_reply,
    usage_chunk,
)
from support.providers import RecordErrors, route_provider

MODEL = "openai/gpt-test"


@pytest.fixture
async def server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        route_provider(monkeypatch, MODEL, openai_adapter.create)
        yield fake


# ---------------------------------------------------------------- replies


async def test_a_plain_reply_streams_as_deltas(server: FakeOpenAIServer) -> None:
    server.push(text_reply("Hel", "lo", " world"))
    agent = Agent(id="a", model=MODEL, instructions="Be brief.")
    handle = agent.stream("hi")
    chunks = [c async for c in handle]
    result = await handle.result()

    assert result.error is None and result.text == "Hello world" and result.model == MODEL
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ["Hel", "lo", " world"]
    types = [c.type for c in chunks]
    assert types.index("text-start") < types.index("text-delta") < types.index("text-end") < types.index("finish")
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "gpt-test" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
    assert "tools" not in body


async def test_a_tool_loop_streams_argument_deltas_and_sends_results_back(server: FakeOpenAIServer) -> None:
    seen: list[Any] = []

    @tool(
        "get_weather",
        "Weather for a city",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    def get_weather(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"city": args["city"], "celsius": 21}

    server.push(
        tool_reply([("call_1", "get_weather", ['{"ci', 'ty": "Par', 'is"}'])]),
        text_reply("Sunny, ", "21°C."),
    )
    agent = Agent(id="a", model=MODEL, tools=[get_weather])
    handle = agent.stream("weather in Paris?")
    chunks = [c async for c in handle]
    result = await handle.result()

    assert result.error is None and result.text == "Sunny, 21°C."
    assert seen == [{"city": "Paris"}]
    assert [c.payload.args_text_delta for c in chunks if c.type == "tool-call-delta"] == ['{"ci', 'ty": "Par', 'is"}']
    start = next(c.payload for c in chunks if c.type == "tool-call-input-streaming-start")
    assert (start.tool_call_id, start.tool_name) == ("call_1", "get_weather")
    call = next(c.payload.call for c in chunks if c.type == "tool-call")
    assert (call.tool_call_id, call.tool_name, call.args) == ("call_1", "get_weather", {"city": "Paris"})
    assert [s.finish_reason for s in result.steps] == ["tool-calls", "stop"]

    first, second = (r.body for r in server.requests)
    assert first["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]
    assert second["messages"][1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"city": "Paris", "celsius": 21}'},
    ]


async def test_image_parts_become_image_url_content(server: FakeOpenAIServer) -> None:
    png = b"\x89PNG\r\n\x1a\nfake"
    server.push(text_reply("a cat"))
    message = Message(
        role="user",
        parts=[
            TextPart("What is this?"),
            FilePart("image/png", data=png, provider_options={"openai": {"imageDetail": "low"}}),
            FilePart("image/jpeg", url="https://example.com/cat.jpg"),
        ],
    )
    result = await Agent(id="a", model=MODEL).generate([message])

    assert result.error is None and result.text == "a cat"
    content = server.requests[0].body["messages"][0]["content"]
    assert content == [
        {"type": "text", "text": "What is this?"},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode(), "detail": "low"},
        },
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
    ]


async def test_usage_reasoning_and_finish_reason(server: FakeOpenAIServer) -> None:
    server.push(
        SSEReply(
            [
                chunk({"role": "assistant", "content": ""}),
                chunk({"reasoning_content": "Think"}),
                chunk({"reasoning_content": "ing."}),
                chunk({"content": "cut"}),
                chunk({}, "length"),
                usage_chunk(40, 30, cached=32, reasoning=12),
            ]
        )
    )
    handle = Agent(id="a", model=MODEL).stream("q")
    chunks = [c async for c in handle]
    result = await handle.result()

    assert result.finish_reason == "length" and result.raw_finish_reason == "length"
    assert result.text == "cut" and result.reasoning_text == "Thinking."
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (40, 30, 70)
    assert (usage.cached_input_tokens, usage.reasoning_tokens) == (32, 12)
    types = [c.type for c in chunks]
    assert types.index("reasoning-end") < types.index("text-start")


@pytest.mark.parametrize(
    ("reply", "status", "code", "retryable"),
    [
        (
            ErrorReply(400, error_body("bad request", "invalid_request_error", param="messages")),
            400,
            "invalid_request_error",
            False,
        ),
        (
            ErrorReply(401, error_body("Incorrect API key provided", "invalid_request_error", "invalid_api_key")),
            401,
            "invalid_api_key",
            False,
        ),
        (
            ErrorReply(429, error_body("Rate limit reached", "requests", "rate_limit_exceeded"), {"retry-after": "2"}),
            429,
            "rate_limit_exceeded",
            True,
        ),
        (ErrorReply(500, error_body("The server had an error", "server_error")), 500, "server_error", True),
        (SSEReply(text_chunks("partial", "more"), disconnect_after=2), None, None, True),
    ],
    ids=["400", "401", "429", "500", "mid-stream-disconnect"],
)
async def test_each_error_class_reaches_process_api_error(
    server: FakeOpenAIServer, reply: Any, status: int | None, code: str | None, retryable: bool
) -> None:
    recorder = RecordErrors()
    server.push(reply)
    agent = Agent(id="a", model=MODEL, error_processors=[recorder], error_processor_defaults=False)
    result = await agent.generate("hi")

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert (error.status_code, error.provider_code, error.retryable) == (status, code, retryable)
    assert result.error is not None and result.error.reason == "MODEL_ERROR"
    assert (result.error.status_code, result.error.retryable) == (status, retryable)
    assert len(server.requests) == 1
    if status == 429:
        assert error.details["retry_after_ms"] == 2000
    if status is not None:
        assert error.details["error"]["message"] == error.message
        assert error.details["request_id"].startswith("req_")


async def test_an_error_event_inside_the_stream_is_a_model_api_error(server: FakeOpenAIServer) -> None:
    recorder = RecordErrors()
    server.push(SSEReply([chunk({"content": "x"}), {"error": error_body("overloaded", "server_error")["error"]}]))
    agent = Agent(id="a", model=MODEL, error_processors=[recorder], error_processor_defaults=False)
    result = await agent.generate("hi")
    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert (error.status_code, error.provider_code, error.retryable) == (None, "server_error", True)
    assert result.error is not None


async def test_one_500_then_success_is_retried_by_the_default_error_processors(server: FakeOpenAIServer) -> None:
    server.push(ErrorReply(500, error_body("The server had an error", "server_error")), text_reply("ok"))
    result = await Agent(id="a", model=MODEL).generate("hi")
    assert result.error is None and result.text == "ok"
    assert len(server.requests) == 2


async def test_without_default_error_processors_the_same_500_fails(server: FakeOpenAIServer) -> None:
    server.push(ErrorReply(500, error_body("The server had an error", "server_error")), text_reply("ok"))
    result = await Agent(id="a", model=MODEL, error_processor_defaults=False).generate("hi")
    assert result.error is not None and result.error.status_code == 500 and result.error.retryable
    assert len(server.requests) == 1


async def test_provider_options_reach_the_request_body(server: FakeOpenAIServer) -> None:
    server.push(text_reply("ok"))
    agent = Agent(
        id="a",
        model=MODEL,
        instructions=[Message.system("sys", {"openai": {"name": "policy"}})],
    )
    user = Message(role="user", parts=[TextPart("hi")], provider_options={"openai": {"name": "alice"}})
    options = ExecutionOptions(
        provider_options={
            "openai": {"reasoningEffort": "low", "parallelToolCalls": False, "metadata": {"traceId": "t1"}},
            "local": {"ignored": True},
        }
    )
    result = await agent.generate([user], options)
    assert result.error is None
    body = server.requests[0].body
    assert body["reasoning_effort"] == "low"
    assert body["parallel_tool_calls"] is False
    assert body["metadata"] == {"traceId": "t1"}  # nested values are sent as given
    assert "ignored" not in json.dumps(body)
    assert body["messages"] == [
        {"role": "system", "content": "sys", "name": "policy"},
        {"role": "user", "content": "hi", "name": "alice"},
    ]


async def test_settings_tool_choice_and_structured_output_map_to_the_request(server: FakeOpenAIServer) -> None:
    @tool("lookup", "Looks up")
    def lookup(args: Any) -> str:
        return "x"

    server.push(text_reply("ok"), SSEReply([*text_chunks('{"answer":', " 42}"), usage_chunk(1, 1)]))
    settings = ModelSettings(
        temperature=0.2,
        top_p=0.9,
        top_k=40,
        max_output_tokens=64,
        presence_penalty=0.1,
        frequency_penalty=0.3,
        stop_sequences=("END",),
        seed=7,
    )
    agent = Agent(id="a", model=MODEL, tools=[lookup])
    await agent.generate("q", ExecutionOptions(model_settings=settings, tool_choice=ToolChoice("tool", "lookup")))
    structured = await agent.generate(
        "q", ExecutionOptions(structured_output=StructuredOutput({"type": "object"}, name="answer"))
    )

    first, second = (r.body for r in server.requests)
    assert first["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}
    assert {k: first[k] for k in ("temperature", "top_p", "presence_penalty", "frequency_penalty", "seed")} == {
        "temperature": 0.2,
        "top_p": 0.9,
        "presence_penalty": 0.1,
        "frequency_penalty": 0.3,
        "seed": 7,
    }
    assert first["stop"] == ["END"]
    assert first["max_tokens"] == 64 and first["top_k"] == 40  # a compatible server (custom base URL)
    assert second["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": {"type": "object"}},
    }
    assert [t["function"]["name"] for t in second["tools"]] == ["lookup"]  # offered beside the schema
    assert structured.object == {"answer": 42}


async def test_cancelling_the_run_closes_the_http_request(server: FakeOpenAIServer) -> None:
    server.push(SSEReply(text_chunks("one", "two", "three"), hang_after=2))
    handle = Agent(id="a", model=MODEL).stream("hi")
    await handle.ready()
    async for c in handle:
        if c.type == "text-delta":
            break
    assert handle.abort()
    result = await handle.result()
    assert result.aborted is not None
    await asyncio.wait_for(server.requests[0].closed.wait(), timeout=5)


async def test_a_stalled_stream_times_out_as_a_retryable_error(server: FakeOpenAIServer) -> None:
    server.push(SSEReply(text_chunks("one"), hang_after=1))
    model = openai_adapter.create("gpt-test", {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.base_url}, timeout=0.3)
    with pytest.raises(ModelAPIError) as info:
        async for _event in model.stream(ModelRequest(prompt=[Message.user("hi")])):
            pass
    assert info.value.retryable and info.value.status_code is None
    await asyncio.wait_for(server.requests[0].closed.wait(), timeout=5)


async def test_missing_credentials_fail_the_run_set_up(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(FailedPrecondition) as info:
        openai_adapter.create("gpt-test", {"OPENAI_BASE_URL": server.base_url})
    assert (info.value.reason, info.value.metadata["variable"]) == ("CREDENTIALS_MISSING", "OPENAI_API_KEY")
    assert info.value.status == "FAILED_PRECONDITION"

    monkeypatch.delenv("OPENAI_API_KEY")
    handle = Agent(id="a", model=MODEL).stream("hi")
    with pytest.raises(FailedPrecondition) as run_info:
        await handle.ready()
    assert run_info.value.reason == "CREDENTIALS_MISSING"
    await handle.result()
    assert server.requests == []


# ---------------------------------------------------------------- mapping without a server


def test_assistant_history_splits_tool_results_into_tool_messages() -> None:
    assistant = Message(
        role="assistant",
        parts=[
            ReasoningPart("hidden"),
            TextPart("Let me check."),
            ToolCallPart("c1", "lookup", {"q": 1}),
            ToolCallPart("c2", "echo", None),
            ToolResultPart("c1", "lookup", {"hits": [1, 2]}),
            ToolResultPart("c2", "echo", "plain text"),
            TextPart("Done."),
        ],
    )
    messages = openai_request.convert_messages([Message.system("a"), Message.user("q"), assistant])
    assert messages[2:] == [
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": 1}'}},
                {"id": "c2", "type": "function", "function": {"name": "echo", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": '{"hits": [1, 2]}'},
        {"role": "tool", "tool_call_id": "c2", "content": "plain text"},
        {"role": "assistant", "content": "Done."},
    ]


def test_files_map_to_content_parts_or_an_unsupported_media_type_error() -> None:
    pdf = openai_request.convert_file(FilePart("application/pdf", data=b"%PDF", filename="a.pdf"))
    assert pdf == {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERg==", "filename": "a.pdf"}}
    text = openai_request.convert_file(FilePart("text/plain", data=b"notes"))
    assert text == {"type": "text", "text": "notes"}
    audio = openai_request.convert_file(FilePart("audio/wav", data=b"RIFF"))
    assert audio == {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}
    with pytest.raises(ModelAPIError) as info:
        openai_request.convert_file(FilePart("application/pdf", url="https://example.com/a.pdf"))
    assert info.value.details["unsupported_media_type"] == "application/pdf" and not info.value.retryable


def test_tool_definitions_and_choices() -> None:
    assert openai_request.convert_tool(ToolDefinition("t", "", {})) == {
        "type": "function",
        "function": {"name": "t", "parameters": {"type": "object", "properties": {}}},
    }
    assert [openai_request.convert_tool_choice(ToolChoice(m)) for m in ("auto", "none", "required")] == [
        "auto",
        "none",
        "required",
    ]
    assert openai_request.convert_tool_choice(None) is None


def test_official_endpoint_uses_max_completion_tokens_and_drops_top_k() -> None:
    model = openai_adapter.create("gpt-test", {"OPENAI_API_KEY": "k"})
    assert model.is_official_endpoint
    params, extra = model.build_params(
        ModelRequest(
            prompt=[Message.user("q")],
            settings=ModelSettings(max_output_tokens=10, top_k=3),
            provider_options={"openai": {"serviceTier": "flex"}},
        )
    )
    assert params["max_completion_tokens"] == 10 and "max_tokens" not in params and "top_k" not in params
    assert extra == {"service_tier": "flex"}


def test_stream_state_maps_finish_reasons_and_unparsable_arguments() -> None:
    state = StreamState()
    state.feed(chunk({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": "{bad"}}]}))
    state.feed(chunk({}, "stop"))  # some compatible servers say stop after tool calls
    events = state.finish()
    call = next(e for e in events if e.type == "tool-call")
    assert call.call.args == {} and call.call.provider_metadata == {"openai": {"rawArguments": "{bad"}}
    assert events[-1].finish_reason == "tool-calls" and events[-1].raw_finish_reason == "stop"

    for raw, mapped in [("content_filter", "content-filter"), ("weird", "other"), ("stop", "stop")]:
        state = StreamState()
        state.feed(chunk({"content": "x"}, raw))
        assert state.finish()[-1].finish_reason == mapped
