"""The `remote` processor over gRPC: a processor service written with the
Python client's helper (agentd_client.processor), served on its own loopback
port, called by an agentd server at every hook it declares; its failures under
each on_error policy."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from agentd_client.processor import Processor, Run, StepOverrides, serve_processor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentd.remote import TargetPolicy, remote_factory
from agentd.runtime import Agent, Tool
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import processor_service_pb2 as ppb
from support.certs import CertificateAuthority
from support.errors import rich_error
from support.server import Running, serving, start_server


class Everything(Processor):
    """Implements every hook; records each call in `calls`."""

    process_data_parts = True

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.opened: list[Run] = []

    def process_input(self, run: Run, call: ppb.ProcessInputCall) -> list[mpb.Message]:
        self.opened.append(run)
        self.calls.append("process_input")
        run.state["parts"] = 0
        out = []
        for m in call.messages:
            m.parts[0].text.text = m.parts[0].text.text.lower()
            out.append(m)
        return out

    def process_input_step(self, run: Run, call: ppb.ProcessInputStepCall) -> None:
        self.calls.append(f"process_input_step:{call.step_number}")

    def process_llm_request(self, run: Run, call: ppb.ProcessLLMRequestCall) -> None:
        self.calls.append("process_llm_request")

    def process_llm_response(self, run: Run, call: ppb.ProcessLLMResponseCall) -> None:
        self.calls.append(f"process_llm_response:{len(call.chunks)}")

    async def process_output_stream(self, run: Run, part: cpb.Chunk) -> cpb.Chunk | None:
        await asyncio.sleep(0)  # async hooks work too
        run.state["parts"] += 1
        if part.HasField("text_delta"):
            if part.text_delta.text.strip() == "drop":
                return None
            part.text_delta.text = part.text_delta.text.replace("secret", "[redacted]")
            if not run.state.get("noted"):
                run.state["noted"] = True
                run.custom("data-remote-note", {"first": True})
        return part

    def process_tool_result(self, run: Run, call: ppb.ProcessToolResultCall) -> None:
        self.calls.append(f"process_tool_result:{call.tool_name}")

    def process_output_step(self, run: Run, call: ppb.ProcessOutputStepCall) -> None:
        self.calls.append(f"process_output_step:{call.step_number}")

    def process_output_result(self, run: Run, call: ppb.ProcessOutputResultCall) -> list[mpb.Message]:
        self.calls.append("process_output_result")
        out = []
        for m in call.messages:
            m.metadata.update({"parts_seen": run.state["parts"], "config": run.config.get("tag", "")})
            out.append(m)
        return out

    def process_api_error(self, run: Run, call: ppb.ProcessAPIErrorCall) -> bool:
        self.calls.append(f"process_api_error:{call.error.status_code}")
        return run.retry_count == 0  # one retry


class Quality(Processor):
    def process_output_step(self, run: Run, call: ppb.ProcessOutputStepCall) -> None:
        if "good" not in call.text:
            run.abort("Be more detailed.", retry=True, metadata={"score": 0.1})


class Signals(Processor):
    def process_output_result(self, run: Run, call: ppb.ProcessOutputResultCall) -> None:
        run.send_signal("reviewed by remote", type="reactive")


class Slow(Processor):
    def __init__(self, delay: float) -> None:
        self.delay = delay

    async def process_input(self, run: Run, call: ppb.ProcessInputCall) -> None:
        await asyncio.sleep(self.delay)


class Crashing(Processor):
    """Fails the stream (an exception in a hook ends the RPC) on its second part."""

    def process_output_stream(self, run: Run, part: cpb.Chunk) -> cpb.Chunk:
        run.state["n"] = run.state.get("n", 0) + 1
        if run.state["n"] == 2:
            raise RuntimeError("processor crashed")
        return part


@pytest.fixture
async def served() -> AsyncIterator[Any]:
    servers: list[grpc.aio.Server] = []

    async def serve(processor: Processor) -> str:
        server = await serve_processor(processor, "127.0.0.1:0")
        servers.append(server)
        return f"127.0.0.1:{server.bound_port}"  # type: ignore[attr-defined]

    yield serve
    for server in servers:
        await server.stop(None)


@pytest.fixture
async def agentd() -> AsyncIterator[Running]:
    add = Tool("add", "Adds", lambda args: args["a"] + args["b"])
    agents = [Agent(id="echo"), Agent(id="tools", model="local/scripted", tools=[add])]
    async with serving(agents, processors={"remote": remote_factory()}) as running:
        yield running


def remote(target: str, **options: Any) -> opb.ProcessorList:
    spec = opb.ProcessorSpec(name="remote")
    spec.options.update({"target": target, "id": options.pop("id", "remote-test"), **options})
    return opb.ProcessorList(processors=[opb.ProcessorRef(processor=spec)])


def script(options: opb.ExecutionOptions, *steps: dict[str, Any]) -> opb.ExecutionOptions:
    options.provider_options.update({"local": {"delayMs": 0, "script": list(steps)}})
    return options


async def chunks_of(running: Running, **request: Any) -> list[cpb.Chunk]:
    return [c async for m in running.agents.Stream(apb.StreamRequest(**request)) for c in m.chunks]


def text_of(chunks: list[cpb.Chunk]) -> str:
    return "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))


async def test_every_hook_with_state_data_chunks_and_a_dropped_part(agentd: Running, served: Any) -> None:
    processor = Everything()
    target = await served(processor)
    lane = remote(target, config={"tag": "t1"})
    options = script(
        opb.ExecutionOptions(
            input_processors=lane, output_processors=lane, error_processors=lane, max_processor_retries=2
        ),
        {"error": {"message": "boom", "status": 503, "retryable": True}},
        {"toolCalls": [{"id": "c1", "name": "add", "args": {"a": 1, "b": 2}}]},
        {"deltas": ["a secret ", "drop", " word"]},
    )
    chunks = await chunks_of(agentd, agent_id="tools", text="HELLO", options=options)
    assert text_of(chunks) == "a [redacted]  word"  # "drop" dropped, "secret" replaced
    notes = [c.data for c in chunks if c.HasField("data")]
    assert [n.type for n in notes] == ["data-remote-note"]
    finish = chunks[-1].finish
    metadata = dict(finish.response_messages[-1].metadata)
    assert metadata["config"] == "t1"
    assert metadata["parts_seen"] > 3  # state kept across the stream and the result hook
    assert processor.calls[0] == "process_input"
    assert "process_api_error:503" in processor.calls
    assert "process_tool_result:add" in processor.calls
    assert "process_llm_response:1" in processor.calls  # the tool call
    assert processor.calls[-1] == "process_output_result"
    assert {"process_input_step:0", "process_llm_request", "process_output_step:1"} <= set(processor.calls)
    assert processor.opened[0].processor_id == "remote-test"
    assert len(processor.opened) == 1  # one stream for the run's three lanes


async def test_process_input_rewrites_the_input(agentd: Running, served: Any) -> None:
    target = await served(Everything())
    reply = await agentd.agents.Generate(
        apb.GenerateRequest(
            agent_id="echo", text="Hello THERE", options=opb.ExecutionOptions(input_processors=remote(target))
        )
    )
    assert reply.text == "hello there"


async def test_abort_with_retry_and_metadata(agentd: Running, served: Any) -> None:
    target = await served(Quality())
    options = script(
        opb.ExecutionOptions(output_processors=remote(target, id="quality"), max_processor_retries=2),
        {"text": "meh"},
        {"text": "good answer"},
    )
    reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="tools", text="x", options=options))
    assert reply.text == "good answer"
    assert len(reply.steps) == 2 and reply.steps[0].tripwire.reason == "Be more detailed."
    assert reply.steps[0].tripwire.processor_id == "quality"
    assert dict(reply.steps[0].tripwire.metadata) == {"score": 0.1}


async def test_abort_without_retries_left_is_the_runs_tripwire(agentd: Running, served: Any) -> None:
    target = await served(Quality())
    options = script(opb.ExecutionOptions(output_processors=remote(target, id="quality")), {"text": "meh"})
    reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="tools", text="x", options=options))
    assert reply.tripwire.reason == "Be more detailed." and reply.tripwire.retry


async def test_send_signal_reaches_the_stream(agentd: Running, served: Any) -> None:
    target = await served(Signals())
    chunks = await chunks_of(
        agentd, agent_id="echo", text="hi", options=opb.ExecutionOptions(output_processors=remote(target))
    )
    echoes = [c.signal.signal for c in chunks if c.HasField("signal")]
    assert any("reviewed by remote" in s.text for s in echoes), echoes


@pytest.mark.parametrize("where", ["slow", "unreachable"])
async def test_fail_open_skips_the_processor(agentd: Running, served: Any, where: str) -> None:
    target = await served(Slow(5)) if where == "slow" else "127.0.0.1:1"
    options = opb.ExecutionOptions(input_processors=remote(target, timeoutMs=200, onError="fail-open"))
    reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="still here", options=options))
    assert reply.text == "still here"


@pytest.mark.parametrize("where", ["slow", "unreachable"])
async def test_fail_closed_is_unavailable(agentd: Running, served: Any, where: str) -> None:
    target = await served(Slow(5)) if where == "slow" else "127.0.0.1:1"
    options = opb.ExecutionOptions(input_processors=remote(target, id="pii", timeoutMs=200, onError="fail-closed"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    error = rich_error(caught.value)
    assert error.code == grpc.StatusCode.UNAVAILABLE
    assert error.reason == "PROCESSOR_UNAVAILABLE"
    assert "pii" in error.message


async def test_tripwire_policy_ends_the_run_as_a_tripwire(agentd: Running, served: Any) -> None:
    target = await served(Slow(5))
    options = opb.ExecutionOptions(input_processors=remote(target, id="pii", timeoutMs=200, onError="tripwire"))
    reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    assert reply.tripwire.processor_id == "pii"
    assert "unavailable" in reply.tripwire.reason


@pytest.mark.parametrize(
    ("policy", "ends"), [("fail-open", "finish"), ("fail-closed", "error"), ("tripwire", "tripwire")]
)
async def test_a_processor_crashing_mid_stream(agentd: Running, served: Any, policy: str, ends: str) -> None:
    target = await served(Crashing())
    options = opb.ExecutionOptions(output_processors=remote(target, onError=policy))
    chunks = await asyncio.wait_for(chunks_of(agentd, agent_id="echo", text="one two three", options=options), 30)
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert ends in kinds
    if policy == "fail-open":
        assert text_of(chunks) == "one two three"
    if policy == "fail-closed":
        assert [c.error.reason for c in chunks if c.HasField("error")] == ["PROCESSOR_UNAVAILABLE"]


async def test_bad_options_are_invalid_argument(agentd: Running) -> None:
    options = opb.ExecutionOptions(input_processors=remote("127.0.0.1:1", onError="sometimes"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "onError" in (caught.value.details() or "")


async def test_fail_closed_once_the_run_started_is_unavailable_too(agentd: Running, served: Any) -> None:
    target = await served(Crashing())
    options = opb.ExecutionOptions(output_processors=remote(target, id="pii", onError="fail-closed"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="one two three", options=options))
    error = rich_error(caught.value)
    assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "PROCESSOR_UNAVAILABLE")


async def test_the_callers_trace_reaches_the_processor_and_it_gets_its_span(served: Any) -> None:
    processor = Everything()
    target = await served(processor)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = await start_server([Agent(id="echo")], processors={"remote": remote_factory()}, tracer_provider=provider)
    try:
        options = opb.ExecutionOptions(input_processors=remote(target, id="pii"))
        await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    finally:
        await running.close()
    spans = exporter.get_finished_spans()
    rpc = next(s for s in spans if s.name == "/agentd.v1.AgentService/Generate")
    assert "processor pii" in [s.name for s in spans]
    traceparent = processor.opened[0].metadata["traceparent"]
    assert traceparent.split("-")[1] == format(rpc.context.trace_id, "032x")


#: More loop turns than the read-ahead's 64 events.
READ_AHEAD_TURNS = 200


class Batched(Processor):
    """Redacts, drops and aborts like Everything, noting which call answered each part."""

    def __init__(self, abort_at: str = "") -> None:
        self.calls: list[int] = []
        self.abort_at = abort_at

    async def process_output_stream(self, run: Run, part: cpb.Chunk) -> cpb.Chunk | None:
        if not part.HasField("text_delta"):
            return part
        if not self.calls or self.calls[-1] != run.call_id:
            # Each call starts by letting the event loop turn (the scripted model
            # emits a delta per turn) so the run reads ahead a full batch, however
            # fast or slow this machine is at the moment.
            for _ in range(READ_AHEAD_TURNS):
                await asyncio.sleep(0)
        self.calls.append(run.call_id)
        word = part.text_delta.text.strip()
        if word == self.abort_at:
            run.abort(f"blocked at {word}")
        if word == "drop":
            return None
        if word == "secret":
            run.custom("data-batch-note", {"call": run.call_id})
        part.text_delta.text = part.text_delta.text.replace("secret", "[redacted]")
        return part


async def test_parts_ready_together_go_in_one_call_with_drops_replacements_and_data(
    agentd: Running, served: Any
) -> None:
    processor = Batched()
    target = await served(processor)
    words = [w for i in range(60) for w in (f"w{i} ", "drop ", "secret ")]
    options = script(opb.ExecutionOptions(output_processors=remote(target)), {"deltas": words})
    chunks = await chunks_of(agentd, agent_id="tools", text="x", options=options)
    assert text_of(chunks) == "".join(f"w{i} [redacted] " for i in range(60))
    assert len([c for c in chunks if c.HasField("data")]) == 60
    assert len(processor.calls) == len(words)
    assert len(set(processor.calls)) < len(words) / 4  # batched: far fewer calls than parts


async def test_an_abort_inside_a_batch_keeps_the_parts_before_it(agentd: Running, served: Any) -> None:
    processor = Batched(abort_at="w30")
    target = await served(processor)
    words = [f"w{i} " for i in range(60)]
    options = script(opb.ExecutionOptions(output_processors=remote(target, id="batcher")), {"deltas": words})
    chunks = await chunks_of(agentd, agent_id="tools", text="x", options=options)
    assert text_of(chunks) == "".join(words[:30])
    tripwires = [c.tripwire.tripwire for c in chunks if c.HasField("tripwire")]
    assert [(t.reason, t.processor_id) for t in tripwires] == [("blocked at w30", "batcher")]


async def test_a_sealed_policy_refuses_a_target_it_does_not_match(served: Any) -> None:
    target = await served(Everything())
    policy = TargetPolicy()
    policy.seal([target])
    async with serving([Agent(id="echo")], processors={"remote": remote_factory(policy=policy)}) as running:
        allowed = opb.ExecutionOptions(input_processors=remote(target))
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="OK", options=allowed))
        assert reply.text == "ok"
        refused = opb.ExecutionOptions(input_processors=remote("10.0.0.1:50070"))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=refused))
    error = rich_error(caught.value)
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REMOTE_TARGET_NOT_ALLOWED")
    assert "target" in " ".join(error.violations)


async def test_tls_and_a_bearer_token_reach_the_processor(agentd: Running, tmp_path: Path) -> None:
    ca = CertificateAuthority.new("processors")
    leaf = ca.issue("processor", ips=["127.0.0.1"])
    credentials = grpc.ssl_server_credentials([(leaf.key_pem, leaf.cert_pem)])
    processor = Everything()
    server = await serve_processor(processor, "127.0.0.1:0", credentials=credentials)
    try:
        target = f"127.0.0.1:{server.bound_port}"  # type: ignore[attr-defined]
        tls = {"caFile": str(ca.write(tmp_path / "ca.pem"))}
        options = opb.ExecutionOptions(input_processors=remote(target, tls=tls, token="s3cret"))
        reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="OVER TLS", options=options))
        assert reply.text == "over tls"
        assert processor.opened[0].metadata["authorization"] == "Bearer s3cret"
        # The same service without TLS on agentd's side is unavailable, not a hang.
        plain = opb.ExecutionOptions(input_processors=remote(target, timeoutMs=2000))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=plain))
        assert rich_error(caught.value).reason == "PROCESSOR_UNAVAILABLE"
    finally:
        await server.stop(None)


async def test_a_token_over_plaintext_to_another_host_is_refused(agentd: Running) -> None:
    options = opb.ExecutionOptions(input_processors=remote("dns:///pii.internal:50070", token="s3cret"))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "loopback" in (caught.value.details() or "")


def user_message(text: str) -> mpb.Message:
    return mpb.Message(role=mpb.ROLE_USER, parts=[mpb.Part(text=mpb.TextPart(text=text))])


class StepRewriter(Processor):
    def process_input_step(self, run: Run, call: ppb.ProcessInputStepCall) -> StepOverrides:
        return StepOverrides(messages=[*call.system_messages, user_message("from the step")])


class PromptRewriter(Processor):
    def process_llm_request(self, run: Run, call: ppb.ProcessLLMRequestCall) -> list[mpb.Message]:
        return [*call.prompt[:-1], user_message("from the prompt")]


@pytest.mark.parametrize(
    ("processor", "said"), [(StepRewriter(), "from the step"), (PromptRewriter(), "from the prompt")]
)
async def test_step_overrides_and_a_rewritten_prompt(
    agentd: Running, served: Any, processor: Processor, said: str
) -> None:
    target = await served(processor)
    options = opb.ExecutionOptions(input_processors=remote(target))
    reply = await agentd.agents.Generate(apb.GenerateRequest(agent_id="echo", text="original", options=options))
    assert reply.text == said
