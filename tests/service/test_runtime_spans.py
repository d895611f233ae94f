"""Run spans over a real server: invoke_agent / chat / execute_tool / one span
per processor per phase, GenAI attributes, the caller's traceparent continued,
tripwires, retries and errors recorded, Connect runs linked rather than
parented, no spans with tracing off, no prompt text unless asked for."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agentd.runtime import Agent, Tool
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.server import Running, start_server

SECRET = "zebra-quartz-7741"  # a word that must not reach a span unless content capture is on


class PassThrough:
    """An output processor with a stream hook (called per chunk) and a step hook."""

    id = "pass-through"

    def process_output_stream(self, args: Any) -> Any:
        return args.part

    def process_output_step(self, args: Any) -> Any:
        return None


class NoTables:
    """Blocks any answer mentioning tables."""

    id = "no-tables"

    def process_output_result(self, args: Any) -> Any:
        if "table" in args.result.text:
            args.abort("tables are off limits")
        return None


def lookup(args: Any, context: Any) -> Any:
    return {"answer": 42, "for": args.get("q")}


AGENTS = [
    Agent(
        id="helper",
        name="Helper",
        model="local/echo",  # a script in the call's provider options overrides the echo
        tools=[Tool("lookup", "Looks things up", lookup)],
        output_processors=[PassThrough(), NoTables()],
    )
]

TOOL_THEN_ANSWER = {
    "local": {
        "script": [
            {
                "toolCalls": [{"id": "call-1", "name": "lookup", "args": {"q": "life"}}],
                "usage": {"inputTokens": 5, "outputTokens": 3},
            },
            {"deltas": ["the ", "answer ", "is ", "42"], "usage": {"inputTokens": 9, "outputTokens": 4}},
        ]
    }
}


def scripted(script: dict[str, Any], text: str = f"what is {SECRET}?", **fields: Any) -> apb.GenerateRequest:
    options = opb.ExecutionOptions()
    options.provider_options.update(script)
    return apb.GenerateRequest(agent_id="helper", text=text, options=options, **fields)


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    yield InMemorySpanExporter()


async def traced_server(exporter: InMemorySpanExporter, **kwargs: Any) -> Running:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return await start_server(AGENTS, tracer_provider=provider, **kwargs)


def named(spans: tuple[ReadableSpan, ...], prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def only(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def everything_recorded(spans: tuple[ReadableSpan, ...]) -> str:
    parts: list[str] = []
    for span in spans:
        parts.append(json.dumps(dict(span.attributes or {}), default=str))
        for event in span.events:
            parts.append(json.dumps(dict(event.attributes or {}), default=str))
    return "\n".join(parts)


async def test_a_run_with_one_tool_call_and_processors_has_its_spans_and_gen_ai_attributes(
    exporter: InMemorySpanExporter,
) -> None:
    running = await traced_server(exporter)
    try:
        reply = await running.agents.Generate(scripted(TOOL_THEN_ANSWER))
        assert reply.text == "the answer is 42"
    finally:
        await running.close()
    spans = exporter.get_finished_spans()
    rpc = only(spans, "/agentd.v1.AgentService/Generate")
    run = only(spans, "invoke_agent Helper")
    assert run.parent is not None and run.parent.span_id == rpc.context.span_id
    assert run.context.trace_id == rpc.context.trace_id
    attrs = dict(run.attributes or {})
    assert attrs["gen_ai.operation.name"] == "invoke_agent"
    assert attrs["gen_ai.agent.id"] == "helper" and attrs["gen_ai.agent.name"] == "Helper"
    assert attrs["gen_ai.response.finish_reasons"] == ("stop",)
    assert attrs["gen_ai.usage.input_tokens"] == 14 and attrs["gen_ai.usage.output_tokens"] == 7  # both steps

    chats = named(spans, "chat ")
    assert [c.name for c in chats] == ["chat echo", "chat echo"]
    for chat in chats:
        assert chat.parent is not None and chat.parent.span_id == run.context.span_id
        assert chat.kind == SpanKind.CLIENT
        c = dict(chat.attributes or {})
        assert c["gen_ai.operation.name"] == "chat"
        assert c["gen_ai.provider.name"] == "local" and c["gen_ai.request.model"] == "echo"
    first, second = sorted(chats, key=lambda s: s.start_time or 0)
    assert dict(first.attributes or {})["gen_ai.response.finish_reasons"] == ("tool-calls",)
    assert dict(first.attributes or {})["gen_ai.usage.input_tokens"] == 5
    assert dict(second.attributes or {})["gen_ai.usage.output_tokens"] == 4

    tool = only(spans, "execute_tool lookup")
    assert tool.parent is not None and tool.parent.span_id == run.context.span_id
    t = dict(tool.attributes or {})
    assert t["gen_ai.operation.name"] == "execute_tool"
    assert t["gen_ai.tool.name"] == "lookup" and t["gen_ai.tool.call.id"] == "call-1"
    assert tool.status.status_code != StatusCode.ERROR

    # One span per processor per phase: two steps for the stream processor,
    # however many chunks it saw, and one result phase for the other.
    streamed = named(spans, "processor pass-through")
    assert [dict(s.attributes or {})["agentd.processor.phase"] for s in streamed] == ["step 0", "step 1"]
    last = dict(streamed[1].attributes or {})
    assert last["agentd.processor.calls"] > 4  # every chunk of the step, one span
    assert set(last["agentd.processor.hooks"]) == {"process_output_stream", "process_output_step"}
    result = only(spans, "processor no-tables")
    assert dict(result.attributes or {})["agentd.processor.phase"] == "result"


async def test_the_callers_traceparent_is_continued(exporter: InMemorySpanExporter) -> None:
    running = await traced_server(exporter)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    try:
        chunks = [
            c
            async for m in running.agents.Stream(
                apb.StreamRequest(agent_id="helper", text="a b"),
                metadata=(("traceparent", f"00-{trace_id}-{parent_id}-01"),),
            )
            for c in m.chunks
        ]
        assert chunks[-1].HasField("finish")
    finally:
        await running.close()
    spans = exporter.get_finished_spans()
    rpc = only(spans, "/agentd.v1.AgentService/Stream")
    assert rpc.parent is not None and format(rpc.parent.span_id, "016x") == parent_id
    for span in spans:
        assert format(span.context.trace_id, "032x") == trace_id, span.name
    run = only(spans, "invoke_agent Helper")
    assert run.parent is not None and run.parent.span_id == rpc.context.span_id


async def test_tripwires_retries_and_errors_are_recorded(exporter: InMemorySpanExporter) -> None:
    running = await traced_server(exporter)
    try:
        blocked = await running.agents.Generate(scripted({"local": {"script": [{"text": "a table of contents"}]}}))
        assert blocked.tripwire.processor_id == "no-tables"
        failing = {
            "local": {"script": [{"error": {"message": "upstream overloaded", "status": 400, "retryable": False}}]}
        }
        with pytest.raises(grpc.aio.AioRpcError, match="upstream overloaded"):
            await running.agents.Generate(scripted(failing))
    finally:
        await running.close()
    spans = exporter.get_finished_spans()
    runs = sorted(named(spans, "invoke_agent"), key=lambda s: s.start_time or 0)
    tripped, errored = runs
    events = {e.name: dict(e.attributes or {}) for e in tripped.events}
    assert events["agentd.tripwire"]["agentd.tripwire.processor_id"] == "no-tables"
    assert dict(tripped.attributes or {})["gen_ai.response.finish_reasons"] == ("other",)
    guard = [s for s in named(spans, "processor no-tables") if dict(s.attributes or {}).get("agentd.tripwire")]
    assert [s.context.trace_id for s in guard] == [tripped.context.trace_id]
    assert errored.status.status_code == StatusCode.ERROR
    assert dict(errored.attributes or {})["error.type"] == "MODEL_ERROR"
    failed_chat = [c for c in named(spans, "chat ") if c.context.trace_id == errored.context.trace_id]
    assert failed_chat and all(c.status.status_code == StatusCode.ERROR for c in failed_chat)
    assert any(e.name == "exception" for e in failed_chat[0].events)


async def test_a_processor_retry_is_an_event_on_the_run(exporter: InMemorySpanExporter) -> None:
    class Retry:
        id = "insist"
        seen = 0

        def process_output_step(self, args: Any) -> Any:
            Retry.seen += 1
            if Retry.seen == 1:
                args.abort("say it again", retry=True)
            return None

    agent = Agent(id="helper", name="Helper", model="local/echo", output_processors=[Retry()], max_processor_retries=2)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = await start_server([agent], tracer_provider=provider)
    try:
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="helper", text="hello"))
        assert reply.text == "hello"
    finally:
        await running.close()
    run = only(exporter.get_finished_spans(), "invoke_agent Helper")
    retries = [dict(e.attributes or {}) for e in run.events if e.name == "agentd.retry"]
    assert retries == [{"cause": "tripwire", "processor_id": "insist", "reason": "say it again"}]


async def test_prompt_and_completion_text_stay_off_spans_unless_asked_for(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = await traced_server(exporter)
    try:
        await running.agents.Generate(scripted(TOOL_THEN_ANSWER))
    finally:
        await running.close()
    assert SECRET not in everything_recorded(exporter.get_finished_spans())

    captured = InMemorySpanExporter()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    running = await traced_server(captured)
    try:
        await running.agents.Generate(scripted(TOOL_THEN_ANSWER))
    finally:
        await running.close()
    recorded = everything_recorded(captured.get_finished_spans())
    assert SECRET in recorded and "the answer is 42" in recorded


async def test_no_spans_are_built_when_tracing_is_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)
    built: list[str] = []
    for tracer_class in (trace.NoOpTracer, trace.ProxyTracer):
        original = tracer_class.start_span

        def counting(self: Any, name: str, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            built.append(name)
            return _original(self, name, *args, **kwargs)

        monkeypatch.setattr(tracer_class, "start_span", counting)
    from opentelemetry.sdk.trace import Tracer as SdkTracer

    original_sdk = SdkTracer.start_span

    def counting_sdk(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        built.append(name)
        return original_sdk(self, name, *args, **kwargs)

    monkeypatch.setattr(SdkTracer, "start_span", counting_sdk)
    running = await start_server(AGENTS)
    try:
        reply = await running.agents.Generate(scripted(TOOL_THEN_ANSWER))
        assert reply.text == "the answer is 42"
        assert running.host.runs.telemetry.tracer is None
    finally:
        await running.close()
    assert built == []


async def test_connect_runs_are_linked_to_the_caller_not_parented_by_the_stream(
    exporter: InMemorySpanExporter,
) -> None:
    running = await traced_server(exporter)
    trace_id, parent_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    requests: asyncio.Queue[tpb.ConnectRequest | None] = asyncio.Queue()

    async def frames() -> Any:
        while (frame := await requests.get()) is not None:
            yield frame

    try:
        call = running.threads.Connect(frames(), metadata=(("traceparent", f"00-{trace_id}-{parent_id}-01"),))
        await requests.put(
            tpb.ConnectRequest(open=tpb.ConnectOpen(agent_id="helper", resource_id="r1", thread_id="t-linked"))
        )
        message = spb.MessageInput(text="hello there")
        await requests.put(tpb.ConnectRequest(request_id="m1", send_message=tpb.ConnectSendMessage(message=message)))
        async for response in call:
            if response.HasField("chunks") and any(c.HasField("finish") for c in response.chunks.chunks):
                break
        await requests.put(None)
        call.cancel()
    finally:
        await running.close()
    spans = exporter.get_finished_spans()
    assert not named(spans, "/agentd.v1.ThreadService/Connect")  # no span as long as the connection
    run = only(spans, "invoke_agent Helper")
    assert run.parent is None
    assert format(run.context.trace_id, "032x") != trace_id
    assert [(format(link.context.trace_id, "032x"), format(link.context.span_id, "016x")) for link in run.links] == [
        (trace_id, parent_id)
    ]
    assert dict(run.attributes or {})["gen_ai.conversation.id"] == "t-linked"
