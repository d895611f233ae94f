"""What `agentd serve` loads at start-up: libraries only some configurations
use (jsonschema for request-context schemas, structured output and judges,
PyJWT and cryptography for JWT authentication, prometheus-client for the
metrics endpoint, the OpenTelemetry SDK for exporters and the endpoint, the
OpenTelemetry metrics API for a server with metrics on, its tracing API for
one with tracing on or a linked stream) and
the built-in processors no agent names wait for their first use
(agentd.runtime.lazy), as do the notifications (but their store) until the
first is sent, listed or dispatched, the scores' records until the first,
the workflows until a configuration or a run has one,
the replicas' thread ownership and log for a single replica, the cache
service's codec and response keys until a call needs them, memory and
prices until an agent's `memory` or a `[pricing]` table, html until the first escape,
pydantic-settings until an AGENTD_* variable names a table, protobuf's JSON
module until a call carries a Struct, the default
error lane's processors until a run builds its lanes, and
tokenize (pydantic reads the config schema's default factories' signatures:
a builtin's is parsed through tokenize)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

#: Modules a server whose configuration names none of them never runs.
DEFERRED = (
    "jsonschema",
    "referencing",
    "jwt",
    "cryptography",
    "prometheus_client",
    "opentelemetry.sdk.metrics",
    "opentelemetry.sdk.trace",
    "opentelemetry.sdk.resources",
    "opentelemetry.sdk._configuration",
    "opentelemetry.propagate",
    "opentelemetry.metrics",
    "opentelemetry.trace",
    "opentelemetry.context",
    "agentd.runtime.processors.builtins.pii_detector",
    "agentd.runtime.processors.builtins.unicode_normalizer",
    "agentd.runtime.processors.builtins.tool_search",
    "agentd.runtime.processors.builtins.token_limiter",
    "agentd.runtime.processors.builtins.moderation",
    "agentd.runtime.processors.builtins.guardrail",
    "agentd.runtime.processors.builtins.response_cache",
    "agentd.runtime.processors.builtins.token_cost_control",
    "agentd.runtime.processors.builtins.cost_limits",
    "agentd.runtime.state_signals",
    "agentd.grpc.connect",
    "agentd.runtime.threads.peers",
    "agentd.runtime.mcp_tools.spec",
    "agentd.runtime.scoring.scorer",
    "agentd.runtime.scoring.builtins",
    "agentd.runtime.processors.builtins.judge",
    "agentd.chat",
    "agentd.backends.sqlite_overrides",
    "sqlite3",
    "urllib.request",
    "http.client",
    "xml.sax.saxutils",
    "wsgiref.simple_server",
    "agentd.remote.processor",
    "agentd.remote.session",
    "agentd.remote.convert",
    "agentd.remote.settings",
    "agentd_proto.v1.processor_service_pb2",
    "html",
    "agentd.runtime.notifications.record",
    "agentd.runtime.notifications.query",
    "agentd.runtime.notifications.policy",
    "agentd.runtime.notifications.render",
    "agentd.runtime.notifications.routing",
    "agentd.runtime.notifications.service",
    "agentd.runtime.notifications.inbox",
    "agentd.grpc.notifications",
    "agentd.runtime.scoring.record",
    "agentd.runtime.workflows.definition",
    "agentd.runtime.workflows.execute",
    "agentd.runtime.workflows.conditions",
    "agentd.runtime.threads.leased",
    "agentd.runtime.threads.shared_log",
    "agentd.runtime.response_keys",
    "agentd.runtime.codec",
    "agentd.runtime.memory",
    "agentd.runtime.pricing",
    "agentd.settings_env",
    "google.protobuf.json_format",
    "agentd.runtime.processors.builtins.provider_history_compat",
    "agentd.runtime.processors.builtins.prefill_error_handler",
    "agentd.runtime.processors.builtins.unsupported_file_handler",
    "agentd.runtime.processors.builtins.stream_error_retry",
    "pydantic_settings",
    "dotenv",
)

#: The default error lane's processors' modules (a run's lanes hold them).
DEFAULT_ERROR_LANE = (
    "provider_history_compat",
    "prefill_error_handler",
    "unsupported_file_handler",
    "stream_error_retry",
)

# Builds the host and the server `agentd serve` builds from an agentd.toml with
# an echo agent (no OTEL_* exporter, no metrics port), starts and stops it, then
# reports which of the deferred modules have run their code.
PROBE = textwrap.dedent(
    f"""
    import asyncio, os, sys, tempfile, pathlib
    for name in [n for n in os.environ if n.startswith("OTEL_")]:
        del os.environ[name]
    from agentd.cli import build_host
    from agentd.grpc.server import AgentdServer
    config = pathlib.Path(tempfile.mkdtemp()) / "agentd.toml"
    config.write_text('[storage]\\nbackend = "memory"\\n[[agents]]\\nid = "echo"\\nmodel = "local/echo"\\n')
    _, host = build_host(str(config), None)
    async def serve():
        server = AgentdServer(host)
        await server.start("127.0.0.1:0")
        await server.stop(0)
    asyncio.run(serve())
    loaded = [n for n in {DEFERRED!r}
              if n in sys.modules and type(sys.modules[n]).__name__ != "_LazyModule"]
    print("loaded:" + ",".join(loaded))
    """
)


def run_probe(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_start_up_loads_no_library_or_builtin_the_configuration_does_not_use() -> None:
    assert run_probe(PROBE) == "loaded:"


def test_start_up_compiles_no_tokenize_pattern() -> None:
    # The config schema's default factories are Python functions: a builtin's
    # signature, which pydantic reads, is parsed by tokenize with a large pattern.
    code = PROBE + "import tokenize\nprint(tokenize._compile.cache_info().currsize)\n"
    assert run_probe(code).splitlines() == ["loaded:", "0"]


def test_a_notification_sent_loads_the_notifications() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.runtime.notifications import NotificationInput
        async def send():
            await host.open()
            sent = await host.notifications.send(
                NotificationInput(source="ci", kind="build", summary="done"),
                agent_id="echo",
                resource_id="r1",
                thread_id="t1",
                route=host.route_notification,
                thread_state=host.thread_state,
            )
            print(sent.record.status)
        asyncio.run(send())
        print(type(sys.modules["agentd.runtime.notifications.service"]).__name__)
        """
    )
    lines = run_probe(code).splitlines()
    assert lines[0] == "loaded:" and lines[-1] == "module", lines


def test_the_dispatchers_passes_load_no_notification_module_while_none_is_due() -> None:
    # (Its first pass, five seconds after start, built the notification
    # service: the modules loaded on the event loop, mid-traffic.)
    serve = """    server = AgentdServer(host)
    await server.start("127.0.0.1:0")
    await server.stop(0)
"""
    passes = """    asked = []
    list_due = host.notification_store.list_due
    async def counted(now, **filters):
        asked.append(now)
        return await list_due(now, **filters)
    host.notification_store.list_due = counted
    server = AgentdServer(host, dispatch_interval=0.002)
    await server.start("127.0.0.1:0")
    while len(asked) < 3:
        await asyncio.sleep(0.002)
    await server.stop(0)
"""
    assert serve in PROBE
    assert run_probe(PROBE.replace(serve, passes)) == "loaded:"


def test_a_deferred_library_loads_on_first_use() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.runtime.lazy import lazy
        assert lazy("jsonschema").Draft202012Validator({"type": "object"}).is_valid({})
        import jwt
        assert jwt.encode({"a": 1}, "k" * 32, algorithm="HS256")
        print(type(sys.modules["jsonschema"]).__name__)
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "module"]


def test_a_deferred_builtin_processor_and_the_sdk_load_when_used() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.runtime.processors.catalogue import default_registry
        from agentd.runtime.options import ProcessorSpec
        from agentd.grpc import metrics
        processor = default_registry().build(ProcessorSpec("pii-detector", options={"strategy": "redact"}))
        assert type(processor).__name__ == "PIIDetector"
        assert metrics.configure(scrape=True) is not None
        print(type(sys.modules["agentd.runtime.processors.builtins.pii_detector"]).__name__)
        print(type(sys.modules["opentelemetry.sdk.metrics"]).__name__)
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "module", "module"]


def test_metrics_on_load_the_metrics_api_and_record() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.grpc import metrics
        configured = metrics.configure(scrape=True)
        host.enable_metrics(configured.provider).run_started("echo")
        print(type(sys.modules["opentelemetry.metrics"]).__name__)
        import prometheus_client
        text = prometheus_client.generate_latest(configured.registry).decode()
        print("agentd_runs_started_total" in text, "agentd_runs_active" in text)
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "module", "True True"]


def test_a_remote_entry_loads_the_remote_processor_when_built() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.remote import RemoteSettings, remote_factory
        processor = remote_factory()({"id": "pii-go", "target": "127.0.0.1:50070"})
        assert type(processor).__name__ == "RemoteProcessor" and RemoteSettings.__name__ == "RemoteSettings"
        print(type(sys.modules["agentd.remote.processor"]).__name__)
        print(type(sys.modules["agentd_proto.v1.processor_service_pb2"]).__name__)
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "module", "module"]


def test_a_run_with_tracing_and_metrics_off_loads_neither_api() -> None:
    code = PROBE.replace(
        "    await server.stop(0)",
        textwrap.indent(
            textwrap.dedent(
                """
                import grpc
                from agentd_proto.v1 import agent_service_pb2, agent_service_pb2_grpc
                async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
                    stub = agent_service_pb2_grpc.AgentServiceStub(channel)
                    await stub.Generate(agent_service_pb2.GenerateRequest(agent_id="echo", text="hi"))
                await server.stop(0)
                """
            ),
            "    ",
        ),
    )
    assert "Generate" in code
    # (The run builds its default error lane, whose processors load then.)
    lane = [m for m in DEFERRED if m.endswith(DEFAULT_ERROR_LANE)]
    assert len(lane) == len(DEFAULT_ERROR_LANE)
    assert sorted(run_probe(code).removeprefix("loaded:").split(",")) == sorted(lane)


def test_the_default_error_lane_loads_when_a_lane_is_built() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.runtime.lanes import DEFAULT_ERROR_PROCESSOR_IDS, resolve_error_processors
        lane = resolve_error_processors([])
        assert [p.id for p in lane] == list(DEFAULT_ERROR_PROCESSOR_IDS), lane
        print(sorted(type(sys.modules[type(p).__module__]).__name__ for p in lane))
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", str(["module"] * 4)]


def test_a_leased_ownership_registers_the_peer_messages_before_its_cluster_carries_one() -> None:
    # Encoded here, where the messages are registered; decoded in a process
    # that has only built a LeasedOwnership (as a replica's host does).
    from agentd.runtime import codec
    from agentd.runtime.threads.peers import AbortAnswer

    body = codec.encode(AbortAnswer("run-1"))
    code = PROBE + textwrap.dedent(
        f"""
        from agentd.runtime import codec
        from agentd.runtime.threads import LeasedOwnership, ThreadSettings
        LeasedOwnership(None, None, ThreadSettings())
        print(codec.decode({body!r}))
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "AbortAnswer(run_id='run-1')"]
