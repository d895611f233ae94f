"""Processors in Go, TypeScript and Java, each its own process, in an `agentd serve`'s
pipeline through the `remote` processor: every hook, state across hooks, a
dropped and a rewritten chunk, a data chunk, abort with retry, a timeout under
each on_error policy, and a processor that crashes mid-run (the run ends by
its on_error, never hangs).

The Go processor is tests/e2e/goprocessor (built with clients/go/processor
from gen/go), the TypeScript one clients/ts/test/e2e-processor.ts (built with
clients/ts from gen/ts), the Java one io.github.agentd.conformance.E2eProcessor
(built with clients/java's io.github.agentd.client.processor from gen/java);
all behave alike (see the Go one's doc comment). The Java PII example
(io.github.agentd.examples.PiiProcessor) redacts through agentd too.
"""

from __future__ import annotations

import json
import selectors
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc as apb_grpc
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from support.errors import rich_error

from . import java_build
from .node_build import TS_CLIENT_DIR
from .serverproc import GO_HINT, REPO_ROOT, ServerProcess, free_port, require_tool, start_server

GO_PROCESSOR = REPO_ROOT / "tests" / "e2e" / "goprocessor"
BUILD_TIMEOUT_S = 600
#: Every call gets a deadline: a run left hanging fails the test instead of stalling it.
CALL_TIMEOUT_S = 30
ALL_HOOKS = {
    "process_input",
    "process_input_step",
    "process_llm_request",
    "process_llm_response",
    "process_output_step",
    "process_tool_result",
    "process_output_result",
    "process_api_error",
}


@dataclass
class ProcessorProcess:
    proc: subprocess.Popen[str]
    addr: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_processor(command: list[str]) -> ProcessorProcess:
    """Starts a processor on a free port and waits for its "listening <addr>" line."""
    proc = subprocess.Popen(
        [*command, "--addr", f"127.0.0.1:{free_port()}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=30):
            proc.kill()
            pytest.fail(f"{command} did not say it listens within 30 s")
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        pytest.fail(f"{command} printed {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}")
    return ProcessorProcess(proc, line.removeprefix("listening "))


@pytest.fixture(scope="module")
def go_command(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    go = require_tool("go", GO_HINT)
    binary = tmp_path_factory.mktemp("goprocessor") / "processor"
    for args in ([go, "vet", "./..."], [go, "build", "-o", str(binary), "."]):
        result = subprocess.run(args, cwd=GO_PROCESSOR, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        assert result.returncode == 0, f"{args}: {result.stdout}\n{result.stderr}"
    return [str(binary)]


@pytest.fixture(scope="module", params=["go", "ts", "java"])
def command(request: pytest.FixtureRequest) -> list[str]:
    if request.param == "go":
        return list(request.getfixturevalue("go_command"))
    if request.param == "java":
        java: str = request.getfixturevalue("java_reactor")
        return [java, "-cp", str(java_build.CONFORMANCE_JAR), "io.github.agentd.conformance.E2eProcessor"]
    node, _ = request.getfixturevalue("ts_client")
    return [node, str(TS_CLIENT_DIR / "build" / "test" / "e2e-processor.js")]


@pytest.fixture(scope="module")
def processor(command: list[str]) -> Iterator[ProcessorProcess]:
    running = start_processor(command)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def agentd(processor: ProcessorProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`agentd serve` with an agent whose agentd.toml entry names the processor."""
    folder = tmp_path_factory.mktemp("agentd-remote")
    config = folder / "agentd.toml"
    entry = f'{{ name = "remote", options = {{ id = "e2e", target = "{processor.addr}", timeout_ms = 5000 }} }}'
    config.write_text(
        '[storage]\nbackend = "memory"\n\n[remote_processors]\nallowed_targets = ["127.0.0.1:*"]\n\n'
        f'[[agents]]\nid = "echo-remote"\nmodel = "local/echo"\ninput_processors = [ {entry} ]\n'
        f"output_processors = [ {entry} ]\n\n"
        '[[agents]]\nid = "echo"\nmodel = "local/echo"\n',
        encoding="utf-8",
    )
    server = start_server(["--app", "tests.e2e.remote_app"], config=config, log_dir=folder)
    try:
        server.wait_serving(timeout=30)
        yield server
    finally:
        server.stop()


@pytest.fixture
def agents(agentd: ServerProcess) -> Iterator[apb_grpc.AgentServiceStub]:
    with grpc.insecure_channel(agentd.addr) as channel:
        yield apb_grpc.AgentServiceStub(channel)


def remote(target: str, **options: Any) -> opb.ProcessorList:
    spec = opb.ProcessorSpec(name="remote")
    spec.options.update({"target": target, "id": options.pop("id", "e2e"), "timeoutMs": 5000, **options})
    return opb.ProcessorList(processors=[opb.ProcessorRef(processor=spec)])


def script(options: opb.ExecutionOptions, *steps: dict[str, Any]) -> opb.ExecutionOptions:
    options.provider_options.update({"local": {"delayMs": 0, "script": list(steps)}})
    return options


def stream(agents: apb_grpc.AgentServiceStub, **request: Any) -> list[cpb.Chunk]:
    responses = agents.Stream(apb.StreamRequest(**request), timeout=CALL_TIMEOUT_S)
    return [c for m in responses for c in m.chunks]


def text_of(chunks: list[cpb.Chunk]) -> str:
    return "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))


def test_every_hook_state_a_data_chunk_and_a_dropped_part(
    agents: apb_grpc.AgentServiceStub, processor: ProcessorProcess
) -> None:
    lane = remote(processor.addr)
    options = script(
        opb.ExecutionOptions(
            input_processors=lane, output_processors=lane, error_processors=lane, max_processor_retries=2
        ),
        {"error": {"message": "boom", "status": 503, "retryable": True}},
        {"toolCalls": [{"id": "c1", "name": "add", "args": {"a": 1, "b": 2}}]},
        {"deltas": ["a secret ", "drop", " word"]},
    )
    chunks = stream(agents, agent_id="tools", text="HELLO", options=options)
    assert text_of(chunks) == "a [redacted]  word"
    assert [c.data.type for c in chunks if c.HasField("data")] == ["data-processor-note"]
    metadata = json_format.MessageToDict(chunks[-1].finish.response_messages[-1].metadata)
    assert ALL_HOOKS <= set(metadata["hooks"]), metadata["hooks"]  # one run's state, across every hook
    assert metadata["partsSeen"] > 3


def test_an_agentd_toml_entry_names_the_processor(agents: apb_grpc.AgentServiceStub) -> None:
    reply = agents.Generate(apb.GenerateRequest(agent_id="echo-remote", text="Hello THERE"), timeout=CALL_TIMEOUT_S)
    assert reply.text == "hello there"
    assert "process_input" in json.dumps(json_format.MessageToDict(reply.response_messages[-1].metadata))


def test_abort_with_retry_and_metadata(agents: apb_grpc.AgentServiceStub, processor: ProcessorProcess) -> None:
    options = script(
        opb.ExecutionOptions(output_processors=remote(processor.addr, id="quality"), max_processor_retries=2),
        {"text": "meh"},
        {"text": "good answer"},
    )
    reply = agents.Generate(apb.GenerateRequest(agent_id="tools", text="x", options=options), timeout=CALL_TIMEOUT_S)
    assert reply.text == "good answer"
    tripwire = reply.steps[0].tripwire
    assert (tripwire.reason, tripwire.retry, tripwire.processor_id) == ("Be more detailed.", True, "quality")
    assert json_format.MessageToDict(tripwire.metadata) == {"score": 0.1}


def slow(addr: str, policy: str) -> opb.ExecutionOptions:
    return opb.ExecutionOptions(
        input_processors=remote(addr, id="slow", timeoutMs=300, onError=policy, config={"sleepMs": 3000})
    )


def test_a_timeout_fail_open(agents: apb_grpc.AgentServiceStub, processor: ProcessorProcess) -> None:
    options = slow(processor.addr, "fail-open")
    reply = agents.Generate(apb.GenerateRequest(agent_id="echo", text="Still HERE", options=options), timeout=30)
    assert reply.text == "Still HERE"  # skipped: not lowercased


def test_a_timeout_fail_closed(agents: apb_grpc.AgentServiceStub, processor: ProcessorProcess) -> None:
    options = slow(processor.addr, "fail-closed")
    with pytest.raises(grpc.RpcError) as caught:
        agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options), timeout=CALL_TIMEOUT_S)
    error = rich_error(caught.value)
    assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "PROCESSOR_UNAVAILABLE")


def test_a_timeout_tripwire(agents: apb_grpc.AgentServiceStub, processor: ProcessorProcess) -> None:
    options = slow(processor.addr, "tripwire")
    reply = agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options), timeout=CALL_TIMEOUT_S)
    assert reply.tripwire.processor_id == "slow" and "unavailable" in reply.tripwire.reason


@pytest.mark.parametrize(
    ("policy", "ends"), [("fail-open", "finish"), ("fail-closed", "error"), ("tripwire", "tripwire")]
)
def test_a_processor_crashing_mid_run(
    agents: apb_grpc.AgentServiceStub, command: list[str], policy: str, ends: str
) -> None:
    crashing = start_processor(command)
    try:
        lane = remote(crashing.addr, id="crashy", onError=policy, config={"crashAtPart": 3})
        chunks = stream(
            agents, agent_id="echo", text="one two three four", options=opb.ExecutionOptions(output_processors=lane)
        )
        assert crashing.proc.wait(timeout=10) == 3  # it did crash, mid-run
    finally:
        crashing.stop()
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert ends in kinds, kinds
    if policy == "fail-open":
        assert text_of(chunks) == "one two three four"
    elif policy == "fail-closed":
        assert [c.error.reason for c in chunks if c.HasField("error")] == ["PROCESSOR_UNAVAILABLE"]
    else:
        assert [c.tripwire.tripwire.processor_id for c in chunks if c.HasField("tripwire")] == ["crashy"]


def test_a_calls_target_outside_allowed_targets_is_refused(agents: apb_grpc.AgentServiceStub) -> None:
    options = opb.ExecutionOptions(input_processors=remote("dns:///elsewhere.example:443"))
    with pytest.raises(grpc.RpcError) as caught:
        agents.Generate(apb.GenerateRequest(agent_id="echo", text="x", options=options), timeout=CALL_TIMEOUT_S)
    error = rich_error(caught.value)
    assert (error.code, error.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "REMOTE_TARGET_NOT_ALLOWED")


@pytest.mark.parametrize("command", ["java"], indirect=True)
def test_the_java_pii_example_redacts_the_input_and_the_stream(
    agents: apb_grpc.AgentServiceStub, java_reactor: str
) -> None:
    pii = start_processor([java_reactor, "-cp", str(java_build.EXAMPLES_JAR), "io.github.agentd.examples.PiiProcessor"])
    try:
        lane = remote(pii.addr, id="pii-java")
        options = opb.ExecutionOptions(input_processors=lane, output_processors=lane)
        text = "mail ann@example.com or call +1 555 010 0199"
        reply = agents.Generate(
            apb.GenerateRequest(agent_id="echo", text=text, options=options), timeout=CALL_TIMEOUT_S
        )
        assert reply.text == "mail [email] or call [phone]"
        # Streamed, each delta is redacted on its own: one word at a time from the echo model.
        options = opb.ExecutionOptions(output_processors=lane)
        chunks = stream(agents, agent_id="echo", text="mail ann@example.com now", options=options)
        assert text_of(chunks) == "mail [email] now"
    finally:
        pii.stop()
