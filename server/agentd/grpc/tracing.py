"""OpenTelemetry set-up from the standard OTEL_* environment.

Spans are built and exported only when the environment asks for an exporter
(OTEL_TRACES_EXPORTER, or an OTLP endpoint); otherwise no provider and no
interceptor are installed, so tracing costs nothing.
"""

from __future__ import annotations

import os
from typing import Any


def enabled(env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return False
    exporter = env.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return False
    return bool(exporter or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


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
            if protocol.startswith("http"):
                raise ValueError("OTLP over HTTP needs opentelemetry-exporter-otlp-proto-http installed")
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        else:
            raise ValueError(f"unsupported OTEL_TRACES_EXPORTER {name!r} (use otlp, console or none)")
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
