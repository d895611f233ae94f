"""A Go (and a Node) caller starts a trace and calls Stream through its
client; the server exports its spans over OTLP/gRPC to a receiver in this
test, and they continue the caller's trace: the RPC span's parent is the
caller's span, the run's parent the RPC span."""

from __future__ import annotations

import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2

from support.polling import until_sync

from .node_build import TS_CLIENT_DIR
from .serverproc import REPO_ROOT, ServerProcess, require_tool, start_server


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """An OTLP trace receiver keeping every span it is sent."""

    def __init__(self) -> None:
        self.spans: list[trace_pb2.Span] = []
        self.lock = threading.Lock()

    def Export(self, request: trace_service_pb2.ExportTraceServiceRequest, context: object) -> object:
        with self.lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    self.spans.extend(scope.spans)
        return trace_service_pb2.ExportTraceServiceResponse()

    def of_trace(self, trace_id: str) -> list[trace_pb2.Span]:
        with self.lock:
            return [s for s in self.spans if s.trace_id.hex() == trace_id]


@pytest.fixture(scope="module")
def receiver() -> Iterator[tuple[Receiver, int]]:
    servicer = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, port
    server.stop(grace=None)


@pytest.fixture(scope="module")
def traced_server(receiver: tuple[Receiver, int], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    _, port = receiver
    env = dict(
        os.environ,
        OTEL_TRACES_EXPORTER="otlp",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{port}",
        OTEL_EXPORTER_OTLP_PROTOCOL="grpc",
        OTEL_EXPORTER_OTLP_INSECURE="true",
        OTEL_BSP_SCHEDULE_DELAY="100",
    )
    server = start_server(env=env, log_dir=tmp_path_factory.mktemp("traced"))
    server.wait_serving(timeout=30)
    yield server
    server.stop(timeout=20)


def wait_for_run(receiver: Receiver, trace_id: str) -> list[trace_pb2.Span]:
    return until_sync(
        lambda: receiver.of_trace(trace_id),
        holds=lambda spans: (
            any(s.name.startswith("invoke_agent") for s in spans) and any(s.name.endswith("/Stream") for s in spans)
        ),
        within=20,
        step=0.1,
        what=f"the run spans of trace {trace_id}",
    )


def assert_continues(spans: list[trace_pb2.Span], parent_span: str) -> None:
    rpc = next(s for s in spans if s.name == "/agentd.v1.AgentService/Stream")
    assert rpc.parent_span_id.hex() == parent_span
    run = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert run.parent_span_id == rpc.span_id
    chat = next(s for s in spans if s.name.startswith("chat "))
    assert chat.parent_span_id == run.span_id


def caller_ids() -> tuple[str, str]:
    return secrets.token_hex(16), secrets.token_hex(8)


def test_a_go_callers_trace_continues_into_the_server(
    receiver: tuple[Receiver, int], traced_server: ServerProcess, tmp_path: Path
) -> None:
    go = require_tool("go", "the Go toolchain >= 1.26 (https://go.dev/dl/)")
    binary = tmp_path / "traced"
    client_dir = REPO_ROOT / "clients" / "go"
    subprocess.run([go, "build", "-o", str(binary), "./examples/traced"], cwd=client_dir, check=True, timeout=600)
    trace_id, span_id = caller_ids()
    out = subprocess.run(
        [str(binary), "-addr", traced_server.addr, "-trace", trace_id, "-span", span_id],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "traced hello"
    assert_continues(wait_for_run(receiver[0], trace_id), span_id)


def test_a_node_callers_trace_continues_into_the_server(
    receiver: tuple[Receiver, int], traced_server: ServerProcess, ts_client: tuple[str, str]
) -> None:
    node, _ = ts_client
    trace_id, span_id = caller_ids()
    out = subprocess.run(
        [node, "build/examples/traced.js", "--addr", traced_server.addr, "--trace", trace_id, "--span", span_id],
        cwd=TS_CLIENT_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "traced hello"
    assert_continues(wait_for_run(receiver[0], trace_id), span_id)
