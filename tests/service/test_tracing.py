"""The OpenTelemetry aio server interceptor, wired in when tracing is on."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentd.grpc import tracing
from agentd_proto.v1 import agent_service_pb2 as apb
from support.server import start_server


async def test_streaming_through_the_interceptor_records_rpc_spans() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = await start_server(tracer_provider=provider)
    try:
        chunks = [
            c async for m in running.agents.Stream(apb.StreamRequest(agent_id="echo", text="a b")) for c in m.chunks
        ]
        assert chunks[-1].HasField("finish")  # a handler that wrote with context.write would fail here
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="c"))
        assert reply.text == "c"
    finally:
        await running.close()
    names = [s.name for s in exporter.get_finished_spans()]
    assert "/agentd.v1.AgentService/Stream" in names
    assert "/agentd.v1.AgentService/Generate" in names


def test_tracing_is_off_unless_the_environment_asks() -> None:
    assert not tracing.enabled({})
    assert tracing.enabled({"OTEL_TRACES_EXPORTER": "console"})
    assert tracing.enabled({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"})
    assert not tracing.enabled({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"})
    assert not tracing.enabled({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"})


async def test_no_interceptor_and_no_provider_when_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for key in ("OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(key, raising=False)
    running = await start_server()
    try:
        assert running.server.tracer_provider is None
    finally:
        await running.close()


async def test_otlp_over_http_exports_the_run_spans(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: spans reach an OTLP/HTTP
    receiver (a real HTTP server here) when the server stops."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

    received: list[str] = []

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
            received.extend(s.name for r in request.resource_spans for x in r.scope_spans for s in x.spans)
            received.append(f"path:{self.path}")
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()
            self.wfile.write(trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

        def log_message(self, *args: object) -> None:
            pass

    http = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{http.server_port}")
    running = await start_server()  # the provider comes from the environment
    try:
        assert (await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi"))).text == "hi"
    finally:
        await running.close()  # stopping shuts the provider down: the batch is flushed
        http.shutdown()
    assert "path:/v1/traces" in received
    assert "invoke_agent Echo" in received and "/agentd.v1.AgentService/Generate" in received
