"""Metrics over real HTTP: `[server] metrics_port` serves the Prometheus
exposition of a scripted workload (runs, a tripwire, a response-cache miss
and hit, a held thread with queued messages and a subscriber), parsed with
prometheus-client's own parser; OTEL_METRICS_EXPORTER=otlp pushes the same
instruments to an OTLP/HTTP receiver; the resource honours OTEL_SERVICE_NAME
and OTEL_RESOURCE_ATTRIBUTES."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from agentd.runtime import Agent, register_provider
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.memory import Memory
from agentd.runtime.processors.base import ProcessInputArgs, Processor
from agentd.runtime.processors.builtins.response_cache import response_cache_factory
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.metrics import scraped, value
from support.polling import until
from support.server import ROOT, Running, start_server
from support_models import HELD, held_model

T = spb.SignalTarget(resource_id="u1", thread_id="t1")
OTEL_VARIABLES = (
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_EXPORTER",
    "OTEL_METRICS_EXPORTER",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_SDK_DISABLED",
)


@pytest.fixture(autouse=True)
def clean_otel_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in OTEL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


class Guard(Processor):
    id = "guard"

    def process_input(self, args: ProcessInputArgs) -> None:
        if any("forbidden" in m.text for m in args.messages):
            args.abort("input mentions forbidden")


@pytest.fixture
async def metered(tmp_path: Path) -> Any:
    register_provider(HELD, held_model)
    storage = InMemoryStorage()
    cache = InMemoryServerCache()
    cached = Agent(id="cached", input_processors=[response_cache_factory({"memory": cache})({"ttl": 600})])
    agents = [
        Agent(id="echo"),
        Agent(id="guarded", input_processors=[Guard()]),
        cached,
        Agent(id="held-chat", model="held/echo", memory=Memory(storage)),
    ]
    running = await start_server(agents, storage=storage, caches={"memory": cache}, metrics_port=0)
    try:
        yield running
    finally:
        await running.close()


def held_options(release: Path) -> opb.ExecutionOptions:
    options = opb.ExecutionOptions()
    options.provider_options.update({"held": {"afterDeltas": 1, "releaseFile": str(release)}})
    return options


async def test_the_scrape_endpoint_counts_a_scripted_workload(metered: Running, tmp_path: Path) -> None:
    port = metered.server.metrics_port
    assert port
    agents = metered.agents
    for text in ("one two", "three"):
        assert (await agents.Generate(apb.GenerateRequest(agent_id="echo", text=text))).text == text
    async for _ in agents.Stream(apb.StreamRequest(agent_id="echo", text="a b c")):
        pass
    tripped = await agents.Generate(apb.GenerateRequest(agent_id="guarded", text="a forbidden topic"))
    assert tripped.tripwire.processor_id == "guard"
    for _ in range(2):  # a miss that calls the model, then a hit that replays it
        await agents.Generate(apb.GenerateRequest(agent_id="cached", text="same question"))
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await agents.Generate(apb.GenerateRequest(agent_id="nobody", text="x"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    # A held run on a thread, two messages queued behind it, and a subscriber.
    release = tmp_path / "release"
    woke = await metered.signals.SendMessage(
        sspb.SendMessageRequest(
            agent_id="held-chat",
            target=T,
            message=spb.MessageInput(text="first words"),
            if_idle=spb.IfIdle(stream_options=held_options(release)),
        )
    )
    queued = [
        await metered.signals.QueueMessage(
            sspb.QueueMessageRequest(agent_id="held-chat", target=T, message=spb.MessageInput(text=f"next {i}"))
        )
        for i in range(2)
    ]
    subscription = metered.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id="t1"))
    assert (await subscription.read()).HasField("snapshot")
    live = await until(
        lambda: scraped(port),
        holds=lambda s: value(s, "agentd_subscriptions_active") == 1,
        what="the subscription counted",
    )
    assert value(live, "agentd_runs_active") == 1
    assert value(live, "agentd_messages_queued") == 2

    release.touch()
    for run_id in (woke.decision.wake.run_id, *(q.decision.deliver.run_id for q in queued)):
        await asyncio.wait_for(metered.host.runs.wait_finished(run_id), 10)
    subscription.cancel()  # its subscriber leaves once the server closes the stream's handler
    done = await until(
        lambda: scraped(port),
        holds=lambda s: (
            value(s, "rpc_server_call_duration_seconds_count", **rpc("ThreadService/Subscribe", "CANCELLED"))
            and value(s, "agentd_subscriptions_active") == 0
        ),
        what="the cancelled subscription counted and gone",
    )

    assert value(done, "agentd_runs_active") == 0
    assert value(done, "agentd_messages_queued") == 0
    assert value(done, "agentd_subscriptions_active") == 0
    started = {a: value(done, "agentd_runs_started_total", gen_ai_agent_id=a) for a in ("echo", "guarded", "cached")}
    assert started == {"echo": 3, "guarded": 1, "cached": 2}
    assert value(done, "agentd_runs_started_total", gen_ai_agent_id="held-chat") == 3
    finished = {
        (dict(labels)["gen_ai_agent_id"], dict(labels)["agentd_finish_reason"]): count
        for (name, labels), count in done.items()
        if name == "agentd_runs_finished_total"
    }
    assert finished == {
        ("echo", "stop"): 3,
        ("guarded", "tripwire"): 1,
        ("cached", "stop"): 2,
        ("held-chat", "stop"): 3,
    }
    assert value(done, "agentd_tripwires_total", agentd_processor_id="guard") == 1
    assert value(done, "agentd_cache_hits_total", agentd_cache_backend="memory") == 1
    assert value(done, "agentd_cache_misses_total", agentd_cache_backend="memory") == 1

    # Model calls: echo's three, the cache's miss (its hit made none), the thread's three; no tripped one.
    local = {"gen_ai_operation_name": "chat", "gen_ai_provider_name": "local", "gen_ai_request_model": "echo"}
    held = {**local, "gen_ai_provider_name": "held"}
    assert value(done, "gen_ai_client_operation_duration_seconds_count", **local) == 4
    assert value(done, "gen_ai_client_operation_duration_seconds_count", **held) == 3
    assert value(done, "gen_ai_client_operation_duration_seconds_bucket", **local, le="+Inf") == 4
    for token_type in ("input", "output"):
        assert value(done, "gen_ai_client_token_usage_count", **local, gen_ai_token_type=token_type) == 4
    # echo's output tokens are its words: 2 + 1 + 3, and 2 for the cache's one call.
    assert value(done, "gen_ai_client_token_usage_sum", **local, gen_ai_token_type="output") == 8

    calls = {
        (dict(labels)["rpc_method"], dict(labels)["rpc_response_status_code"]): count
        for (name, labels), count in done.items()
        if name == "rpc_server_call_duration_seconds_count"
    }
    assert calls == {
        ("agentd.v1.AgentService/Generate", "OK"): 5,
        ("agentd.v1.AgentService/Generate", "NOT_FOUND"): 1,
        ("agentd.v1.AgentService/Stream", "OK"): 1,
        ("agentd.v1.SignalService/SendMessage", "OK"): 1,
        ("agentd.v1.SignalService/QueueMessage", "OK"): 2,
        ("agentd.v1.ThreadService/Subscribe", "CANCELLED"): 1,
    }
    assert value(done, "rpc_server_call_duration_seconds_bucket", **rpc("AgentService/Generate", "OK"), le="+Inf") == 5
    target = next(labels for (name, labels) in done if name == "target_info")
    assert ("service_name", "agentd") in target
    # Every metric the README lists is there (the take-overs need replicas: tests/redis counts them;
    # the scores need scorers: tests/service/test_scorers_rpc.py scrapes them).
    names = {name for name, _ in done}
    elsewhere = {"agentd_lease_takeovers_total", "agentd_scores_count", "agentd_scores_dropped_total"}
    assert readme_metrics() - elsewhere <= names


def readme_metrics() -> set[str]:
    """The README's Metrics table, as Prometheus names samples carry."""
    section = (ROOT / "README.md").read_text().split("\n## Metrics\n", 1)[1].split("\n## ", 1)[0]
    names = set()
    for cell, kind in re.findall(r"^\| (`[^|]+) \| (histogram|counter|gauge) \|", section, re.M):
        unit = "_seconds" if cell.endswith("(s)") else ""
        suffix = {"histogram": "_count", "counter": "_total", "gauge": ""}[kind]
        names |= {name.replace(".", "_") + unit + suffix for name in re.findall(r"`([a-z_.]+)`", cell)}
    assert len(names) == 14, names
    return names


def rpc(method: str, code: str) -> dict[str, str]:
    return {"rpc_method": f"agentd.v1.{method}", "rpc_response_status_code": code, "rpc_system_name": "grpc"}


async def test_no_metrics_endpoint_and_no_meter_unless_asked() -> None:
    running = await start_server()
    try:
        assert running.server.metrics is None and running.server.metrics_port is None
        assert not running.host.runs.telemetry.metrics.enabled
        await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi"))
    finally:
        await running.close()


async def test_the_resource_honours_otel_service_name_and_resource_attributes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_SERVICE_NAME", "support-agents")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging,service.name=ignored")
    running = await start_server(metrics_port=0)
    try:
        assert running.server.metrics_port is not None
        samples = await scraped(running.server.metrics_port)
    finally:
        await running.close()
    target = dict(next(labels for (name, labels) in samples if name == "target_info"))
    # OTEL_SERVICE_NAME wins over a service.name in the attributes, as the SDK specifies.
    assert target["service_name"] == "support-agents"
    assert target["deployment_environment_name"] == "staging"


class _Receiver:
    """An OTLP/HTTP receiver: what reached /v1/traces and /v1/metrics."""

    def __init__(self) -> None:
        self.spans: list[tuple[dict[str, str], str]] = []  # (resource attributes, span name)
        self.metrics: list[tuple[dict[str, str], str]] = []  # (resource attributes, metric name)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/traces":
                    traces = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
                    for r in traces.resource_spans:
                        attrs = {a.key: a.value.string_value for a in r.resource.attributes}
                        receiver.spans.extend((attrs, s.name) for x in r.scope_spans for s in x.spans)
                    reply: Any = trace_service_pb2.ExportTraceServiceResponse()
                else:
                    metrics = metrics_service_pb2.ExportMetricsServiceRequest.FromString(body)
                    for m in metrics.resource_metrics:
                        attrs = {a.key: a.value.string_value for a in m.resource.attributes}
                        receiver.metrics.extend((attrs, x.name) for s in m.scope_metrics for x in s.metrics)
                    reply = metrics_service_pb2.ExportMetricsServiceResponse()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.end_headers()
                self.wfile.write(reply.SerializeToString())

            def log_message(self, *args: object) -> None:
                pass

        self.http = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.http.server_port}"


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    received = _Receiver()
    yield received
    received.http.shutdown()
    received.http.server_close()


async def test_otlp_metrics_and_spans_carry_the_configured_service_name(
    monkeypatch: pytest.MonkeyPatch, receiver: _Receiver
) -> None:
    """OTEL_METRICS_EXPORTER=otlp over http/protobuf: the instruments reach the
    receiver when the server stops, and both signals name the service as the
    environment does (tracing used to force service.name=agentd)."""
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=billing,service.namespace=ai")
    running = await start_server()  # no scrape endpoint: the environment alone asks for metrics
    try:
        assert running.server.metrics_port is None
        assert (await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="hi"))).text == "hi"
    finally:
        await running.close()  # the last export, of traces and metrics, on the way out
    names = {name for _, name in receiver.metrics}
    assert {"agentd.runs.started", "gen_ai.client.operation.duration", "rpc.server.call.duration"} <= names
    assert {"invoke_agent Echo", "/agentd.v1.AgentService/Generate"} <= {name for _, name in receiver.spans}
    for attributes, _ in receiver.metrics + receiver.spans:
        assert (attributes["service.name"], attributes["service.namespace"]) == ("billing", "ai")
