"""OpenTelemetry set-up from the standard OTEL_* environment.

Spans are built and exported only when the environment asks for an exporter
(OTEL_TRACES_EXPORTER, or an OTLP endpoint); otherwise no provider and no
interceptor are installed, so tracing costs nothing.
"""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import propagate, trace

from agentd.runtime.telemetry import LINK_TO


def enabled(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def capture_content(env: dict[str, str] | None = None) -> bool:
    """Prompt and completion text go on spans only when the operator opts in."""
    env = dict(os.environ) if env is None else env
    return env.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").strip().lower() == "true"


def configure() -> Any:
    """A TracerProvider exporting per the environment, or None when tracing is off."""
    if not enabled():
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "agentd"}))
    names = [n.strip() for n in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if n.strip()]
    for name in names:
        exporter: SpanExporter
        if name == "console":
            exporter = ConsoleSpanExporter()
        elif name == "otlp":
            protocol = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or os.environ.get(
                "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
            )
            if protocol.startswith("http"):  # http/protobuf
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPExporter

                exporter = HTTPExporter()
            else:
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

                exporter = OTLPSpanExporter()
        else:
            raise ValueError(f"unsupported OTEL_TRACES_EXPORTER {name!r} (use otlp, console or none)")
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def link_runs_to_caller(metadata: Any) -> None:
    """Runs started from here on (in this task and tasks it creates) become
    roots linked to the caller's traceparent: for long-lived streams, which
    would otherwise parent every run of a connection that lasts for hours."""
    carrier = {key: value for key, value in metadata or () if isinstance(value, str)}
    context = trace.get_current_span(propagate.extract(carrier)).get_span_context()
    LINK_TO.set(context if context.is_valid else trace.INVALID_SPAN_CONTEXT)


def long_lived(method: str) -> bool:
    """Streams that last as long as a client stays: no RPC span around them."""
    return method in ("/agentd.v1.ThreadService/Subscribe", "/agentd.v1.ThreadService/Connect")
