"""The `anthropic/...` adapter: the real SDK against a local server speaking the
provider's streaming wire format (server-sent events), driven through the real
agent loop."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

pytest.importorskip("anthropic")

from agentd.runtime import Agent, ExecutionOptions, FailedPrecondition, Message, ModelSettings, ToolChoice, tool
from agentd.runtime.messages import FilePart, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.models import anthropic as anthropic_adapter
from agentd.runtime.models.anthropic import request as anthropic_request
from agentd.runtime.models.base import ModelAPIError, ModelRequest, ToolDefinition
from agentd.runtime.options import StructuredOutput
from fakes.anthropic_server import (
    AnthropicServer,
    StreamReply,
    error_event,
    error_reply,
    message_start,
    reply,
    text_block,
    text_reply,
    thinking_block,
    tool_use_block,
)
from support.providers import RecordErrors, route_provider
from support.runs import run

MODEL = "anthropic/claude-test"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


@pytest.fixture
async def server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[AnthropicServer]:
    async with AnthropicServer() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        route_provider(monkeypatch, MODEL, anthropic_adapter.create)
        try:
            yield fake
        finally:
            await anthropic_adapter.close_clients()


# ---------------------------------------------------------------- replies


async def test_a_plain_reply_streams_as_deltas(server: AnthropicServer) -> None:
    server.push(text_reply("Hel", "lo", " world"))
    result, chunks = await run(Agent(id="a", model=MODEL, instructions="Be brief."), "hi")

    assert result.error is None and result.text == "Hello world" and result.model == MODEL
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ["Hel", "lo", " world"]
    types = [c.type for c in chunks]
    assert types.index("text-start") < types.index("text-delta") < types.index("text-end") < types.index("finish")
    metadata = next(c.payload for c in chunks if c.type == "response-metadata")
    assert (metadata.response_id, metadata.model_id) == ("msg_fake01", "claude-test")
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/messages")
    assert "sk-ant-test" in (request.headers.get("x-api-key") or request.headers.get("authorization", ""))
    assert request.headers.get("x-stainless-retry-count") in (None, "0")
    body = request.body
    assert body["model"] == "claude-test" and body["stream"] is True and body["max_tokens"] == 4096
    assert body["system"] == [{"type": "text", "text": "Be brief."}]
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert "tools" not in body and "tool_choice" not in body


async def test_usage_and_finish_reason(server: AnthropicServer) -> None:
    server.push(
        reply(
            text_block(0, "cut sh"),
            stop_reason="max_tokens",
            input_tokens=12,
            output_tokens=7,
            cache_read=30,
            cache_creation=4,
            thinking_tokens=3,
        )
    )
    result, _chunks = await run(Agent(id="a", model=MODEL), "hi")

    assert result.finish_reason == "length" and result.raw_finish_reason == "max_tokens"
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (12, 7, 19)
    assert (usage.cached_input_tokens, usage.cache_creation_input_tokens, usage.reasoning_tokens) == (30, 4, 3)
    assert result.total_usage.input_tokens == 12


@pytest.mark.parametrize(
    ("stop_reason", "finish_reason"),
    [
        ("end_turn", "stop"),
        ("stop_sequence", "stop"),
        ("max_tokens", "length"),
        ("refusal", "content-filter"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons_map_to_finish_reasons(
    server: AnthropicServer, stop_reason: str, finish_reason: str
) -> None:
    server.push(reply(text_block(0, "x"), stop_reason=stop_reason))
    result, _chunks = await run(Agent(id="a", model=MODEL), "hi")
    assert (result.finish_reason, result.raw_finish_reason) == (finish_reason, stop_reason)


async def test_a_tool_loop_streams_argument_deltas_and_sends_results_back(server: AnthropicServer) -> None:
    seen: list[Any] = []

    @tool(
        "get_weather",
        "Weather for a city",
        {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    )
    def get_weather(args: dict[str, Any]) -> dict[str, Any]:
        seen.append(args)
        return {"city": args["city"], "celsius": 21}

    @tool("broken", "Always fails")
    def broken(args: dict[str, Any]) -> str:
        raise RuntimeError("tool exploded")

    server.push(
        reply(
            text_block(0, "Checking."),
            tool_use_block(1, "toolu_01", "get_weather", '{"ci', 'ty": "Par', 'is"}'),
            tool_use_block(2, "toolu_02", "broken"),
            stop_reason="tool_use",
        ),
        text_reply("Sunny, ", "21°C."),
    )
    agent = Agent(id="a", model=MODEL, tools=[get_weather, broken])
    result, chunks = await run(
        agent,
        "weather in Paris?",
        ExecutionOptions(
            tool_choice=ToolChoice("required"),
            model_settings=ModelSettings(
                temperature=0.2, top_p=0.9, top_k=40, max_output_tokens=256, stop_sequences=("END",)
            ),
        ),
    )

    assert result.error is None and result.text == "Checking.Sunny, 21°C."
    assert seen == [{"city": "Paris"}]
    assert [c.payload.args_text_delta for c in chunks if c.type == "tool-call-delta"] == ['{"ci', 'ty": "Par', 'is"}']
    calls = [c.payload.call for c in chunks if c.type == "tool-call"]
    assert [(c.tool_call_id, c.tool_name, c.args) for c in calls] == [
        ("toolu_01", "get_weather", {"city": "Paris"}),
        ("toolu_02", "broken", {}),
    ]
    assert [s.finish_reason for s in result.steps] == ["tool-calls", "stop"]

    first, second = server.bodies
    assert first["tools"] == [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
        {"name": "broken", "description": "Always fails", "input_schema": {"type": "object", "properties": {}}},
    ]
    assert first["tool_choice"] == {"type": "any"}
    assert (first["temperature"], first["top_p"], first["top_k"], first["max_tokens"]) == (0.2, 0.9, 40, 256)
    assert first["stop_sequences"] == ["END"]
    assert second["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_02", "name": "broken", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": '{"city": "Paris", "celsius": 21}'},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": "tool exploded", "is_error": True},
            ],
        },
    ]


async def test_image_and_document_parts(server: AnthropicServer) -> None:
    server.push(text_reply("A square."))
    message = Message(
        role="user",
        parts=[
            TextPart("What is this?"),
            FilePart("image/png", data=PNG),
            FilePart("image/jpeg", url="https://example.com/cat.jpg"),
            FilePart("image/*", url="data:image/png;base64," + base64.b64encode(PNG).decode()),
            FilePart("application/pdf", data=b"%PDF-1.4 fake", filename="report.pdf"),
            FilePart("text/plain", data=b"some notes"),
        ],
    )
    result, _chunks = await run(Agent(id="a", model=MODEL), message)

    assert result.error is None and result.text == "A square."
    png = base64.b64encode(PNG).decode()
    assert server.bodies[0]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
                {
                    "type": "document",
                    "source": {
                        "type": "base64",
                        "media_type": "application/pdf",
                        "data": base64.b64encode(b"%PDF-1.4 fake").decode(),
                    },
                    "title": "report.pdf",
                },
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "some notes"}},
            ],
        }
    ]


async def test_an_unsupported_file_is_replaced_by_the_default_handler(server: AnthropicServer) -> None:
    server.push(text_reply("ok"))
    message = Message(role="user", parts=[TextPart("see"), FilePart("application/zip", data=b"PK", filename="a.zip")])
    result, _chunks = await run(Agent(id="a", model=MODEL), message)

    assert result.error is None and result.text == "ok"
    (body,) = server.bodies  # refused before sending, then sent once without the file
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "see"},
        {"type": "text", "text": "[Attachment unavailable: a.zip]"},
    ]


async def test_structured_output_is_a_forced_tool_surfaced_as_text(server: AnthropicServer) -> None:
    server.push(reply(tool_use_block(0, "toolu_s", "answer", '{"n":', " 42}"), stop_reason="tool_use"))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    result, chunks = await run(
        Agent(id="a", model=MODEL), "6*7?", ExecutionOptions(structured_output=StructuredOutput(schema, name="answer"))
    )

    assert result.error is None and result.object == {"n": 42}
    assert result.finish_reason == "stop" and result.raw_finish_reason == "tool_use"
    assert [c.payload.text for c in chunks if c.type == "text-delta"] == ['{"n":', " 42}"]
    assert not [c for c in chunks if c.type == "tool-call"]
    body = server.bodies[0]
    assert body["tools"] == [
        {
            "name": "answer",
            "description": "Answer with your response as this tool's input, matching its schema.",
            "input_schema": schema,
        }
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "answer"}


async def test_structured_output_beside_the_agents_tools_lets_the_model_call_them(server: AnthropicServer) -> None:
    @tool("lookup", "Looks up a number")
    def lookup(args: Any) -> int:
        return 42

    server.push(reply(tool_use_block(0, "toolu_s", "answer", '{"n": 42}'), stop_reason="tool_use"))
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    options = ExecutionOptions(structured_output=StructuredOutput(schema, name="answer"))
    result, _ = await run(Agent(id="a", model=MODEL, tools=[lookup]), "6*7?", options)

    assert result.error is None and result.object == {"n": 42}
    body = server.bodies[0]
    assert [t["name"] for t in body["tools"]] == ["lookup", "answer"]
    assert body["tool_choice"] == {"type": "any"}  # a real tool, or the answer


# ---------------------------------------------------------------- reasoning


async def test_thinking_streams_as_reasoning_with_its_signature(server: AnthropicServer) -> None:
    server.push(reply(thinking_block(0, "Let me ", "think.", signature="sig-123"), text_block(1, "42")))
    result, chunks = await run(Agent(id="a", model=MODEL), "meaning of life?")

    assert result.error is None and result.text == "42" and result.reasoning_text == "Let me think."
    assert [c.payload.text for c in chunks if c.type == "reasoning-delta"] == ["Let me ", "think."]
    (end,) = [c.payload for c in chunks if c.type == "reasoning-end"]
    assert end.signature == "sig-123" and end.provider_metadata == {"anthropic": {"signature": "sig-123"}}


async def test_signed_reasoning_in_history_goes_back_as_thinking(server: AnthropicServer) -> None:
    server.push(text_reply("Done."))
    history = [
        Message.user("weather?"),
        Message(
            role="assistant",
            parts=[
                ReasoningPart("I should call the tool.", signature="sig-abc"),
                ReasoningPart("", redacted_data=b"opaque-blob"),
                ReasoningPart("unsigned, from elsewhere"),
                ToolCallPart("toolu_9", "get_weather", {"city": "Oslo"}),
                ToolResultPart("toolu_9", "get_weather", "cold"),
            ],
        ),
    ]
    agent = Agent(id="a", model=MODEL, error_processor_defaults=False)
    result, _chunks = await run(agent, history)

    assert result.error is None
    assert server.bodies[0]["messages"][1:] == [
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should call the tool.", "signature": "sig-abc"},
                {"type": "redacted_thinking", "data": "opaque-blob"},
                {"type": "tool_use", "id": "toolu_9", "name": "get_weather", "input": {"city": "Oslo"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "cold"}]},
    ]


async def test_thinking_round_trips_through_a_tool_loop(server: AnthropicServer) -> None:
    @tool("lookup", "Looks up")
    def lookup(args: dict[str, Any]) -> str:
        return "found"

    server.push(
        reply(
            thinking_block(0, "Need data.", signature="sig-loop"),
            tool_use_block(1, "toolu_1", "lookup", "{}"),
            stop_reason="tool_use",
        ),
        text_reply("Answer."),
    )
    options = ExecutionOptions(provider_options={"anthropic": {"thinking": {"type": "enabled", "budgetTokens": 1024}}})
    result, _chunks = await run(Agent(id="a", model=MODEL, tools=[lookup]), "q", options)

    assert result.error is None
    assert server.bodies[1]["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "Need data.",
        "signature": "sig-loop",
    }


# ---------------------------------------------------------------- provider options


async def test_provider_options_reach_the_request_body(server: AnthropicServer) -> None:
    server.push(text_reply("ok"))
    ephemeral = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
    agent = Agent(
        id="a",
        model=MODEL,
        instructions=[Message.system("Long cached preamble.", ephemeral), "Not cached."],
    )
    history = [
        Message(role="user", parts=[TextPart("first"), TextPart("second")], provider_options=ephemeral),
        Message(role="assistant", parts=[TextPart("noted")]),
        Message(
            role="user",
            parts=[
                TextPart(
                    "part-level", provider_options={"anthropic": {"cacheControl": {"type": "ephemeral", "ttl": "1h"}}}
                )
            ],
        ),
    ]
    options = ExecutionOptions(
        provider_options={
            "anthropic": {
                "thinking": {"type": "enabled", "budgetTokens": 1024},
                "metadata": {"userId": "u-1"},
                "betas": ["some-beta-2025-01-01"],
            },
            "openai": {"ignored": True},
        }
    )
    result, _chunks = await run(agent, history, options)

    assert result.error is None
    (request,) = server.requests
    body = request.body
    assert body["system"] == [
        {"type": "text", "text": "Long cached preamble.", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Not cached."},
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "first"},
                {"type": "text", "text": "second", "cache_control": {"type": "ephemeral"}},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "noted"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "part-level", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
        },
    ]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert body["max_tokens"] == 4096 + 1024
    assert body["metadata"] == {"user_id": "u-1"}
    assert "betas" not in body and "ignored" not in body
    assert request.headers["anthropic-beta"] == "some-beta-2025-01-01"


def test_consecutive_turns_merge_and_tool_choice_maps() -> None:
    request = ModelRequest(
        prompt=[Message.system("s"), Message.user("a"), Message.user("b"), Message(role="assistant", parts=[])],
        tools=[ToolDefinition("t", "a tool", {"type": "object", "properties": {"x": {"type": "string"}}})],
        tool_choice=ToolChoice("tool", "t"),
        provider_options={"anthropic": {"disableParallelToolUse": True, "topK": 3}},
    )
    body = anthropic_request.build_call("m", request).body
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    ]
    assert body["tool_choice"] == {"type": "tool", "name": "t", "disable_parallel_tool_use": True}
    assert body["top_k"] == 3
    for mode, expected in (("auto", {"type": "auto"}), ("none", {"type": "none"}), ("required", {"type": "any"})):
        request.tool_choice = ToolChoice(mode)  # type: ignore[arg-type]
        request.provider_options = {}
        assert anthropic_request.build_call("m", request).body["tool_choice"] == expected


# ---------------------------------------------------------------- errors


def _sse_error(error_type: str, message: str) -> StreamReply:
    return StreamReply([message_start(), error_event(error_type, message)])


@pytest.mark.parametrize(
    ("answer", "status", "code", "retryable"),
    [
        (error_reply(400, "messages: field required"), 400, "invalid_request_error", False),
        (error_reply(401, "invalid x-api-key"), 401, "authentication_error", False),
        (error_reply(429, "slow down", headers={"retry-after": "7"}), 429, "rate_limit_error", True),
        (error_reply(500, "internal"), 500, "api_error", True),
        (error_reply(529, "Overloaded"), 529, "overloaded_error", True),
        (_sse_error("overloaded_error", "Overloaded"), 529, "overloaded_error", True),
        (reply(text_block(0, "a", "b", "c"), disconnect_after=4), None, "connection_error", True),
        (reply(text_block(0, "a"), end_after=3), None, "connection_error", True),
    ],
    ids=["400", "401", "429", "500", "529", "sse-error-event", "disconnect", "no-message-stop"],
)
async def test_each_error_class_reaches_process_api_error(
    server: AnthropicServer, answer: Any, status: int | None, code: str, retryable: bool
) -> None:
    server.push(answer)
    recorder = RecordErrors()
    agent = Agent(id="a", model=MODEL, error_processors=[recorder], error_processor_defaults=False)
    result, chunks = await run(agent, "hi")

    (error,) = recorder.errors
    assert isinstance(error, ModelAPIError)
    assert (error.status_code, error.provider_code, error.retryable) == (status, code, retryable)
    assert error.message
    assert result.error is not None and result.error.reason == "MODEL_ERROR"
    assert (result.error.status_code, result.error.provider_code, result.error.retryable) == (status, code, retryable)
    assert chunks[-1].type == "error"
    assert len(server.requests) == 1  # the SDK itself never retries
    if status == 429:
        assert error.details["headers"]["retry-after"] == "7"
    if status is not None and not error.details.get("midStream"):
        assert error.details["body"]["error"]["type"] == code


async def test_one_500_then_success_is_retried_by_the_default_processors(server: AnthropicServer) -> None:
    server.push(error_reply(500, "internal"), text_reply("recovered"))
    result, _chunks = await run(Agent(id="a", model=MODEL), "hi")

    assert result.error is None and result.text == "recovered"
    assert len(server.requests) == 2
    assert server.bodies[0] == server.bodies[1]


async def test_one_500_fails_the_run_without_the_default_processors(server: AnthropicServer) -> None:
    server.push(error_reply(500, "internal"), text_reply("never sent"))
    result, _chunks = await run(Agent(id="a", model=MODEL), "hi", ExecutionOptions(error_processor_defaults=False))

    assert result.error is not None and result.error.status_code == 500 and result.error.retryable
    assert len(server.requests) == 1


# ---------------------------------------------------------------- cancellation, timeouts, credentials


async def test_cancelling_the_run_closes_the_http_request(server: AnthropicServer) -> None:
    server.push(reply(text_block(0, "a", "b", "c"), hang_after=4))
    handle = Agent(id="a", model=MODEL).stream("hi")
    async for chunk in handle:
        if chunk.type == "text-delta":
            assert handle.abort()
    result = await handle.result()

    assert result.aborted is not None
    (request,) = server.requests
    await asyncio.wait_for(request.disconnected.wait(), 5)


async def test_a_timeout_is_a_retryable_model_error(server: AnthropicServer) -> None:
    server.push(reply(text_block(0, "a", "b"), hang_after=3))
    model = anthropic_adapter.create(
        "claude-test", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.base_url}, timeout=0.3
    )
    events = []
    with pytest.raises(ModelAPIError) as caught:
        async for event in model.stream(ModelRequest(prompt=[Message.user("hi")])):
            events.append(event)
    assert caught.value.provider_code == "timeout" and caught.value.retryable
    assert [e.type for e in events][:2] == ["response-metadata", "text-start"]
    await asyncio.wait_for(server.requests[0].disconnected.wait(), 5)


async def test_missing_credentials_fail_the_run_before_it_starts(
    server: AnthropicServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(FailedPrecondition) as caught:
        await Agent(id="a", model=MODEL).generate("hi")
    assert caught.value.reason == "CREDENTIALS_MISSING"
    assert caught.value.metadata["variable"] == "ANTHROPIC_API_KEY"
    assert "ANTHROPIC_API_KEY" in caught.value.message
    assert server.requests == []


def test_create_reads_the_given_environment() -> None:
    with pytest.raises(FailedPrecondition) as caught:
        anthropic_adapter.create("claude-test", {"ANTHROPIC_API_KEY": "  "})
    assert caught.value.status == "FAILED_PRECONDITION" and caught.value.reason == "CREDENTIALS_MISSING"
    model = anthropic_adapter.create("claude-x", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"})
    assert (model.provider, model.model_id, model.spec, model.base_url) == (
        "anthropic",
        "claude-x",
        "anthropic/claude-x",
        "http://127.0.0.1:1",
    )
    default = anthropic_adapter.create("claude-x", {"ANTHROPIC_API_KEY": "k"})
    assert default.base_url == "https://api.anthropic.com"
