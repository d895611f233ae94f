"""OpenTelemetry set-up from the standard OTEL_* environment.

Spans are built and exported only when the environment asks for an exporter
(OTEL_TRACES_EXPORTER, or an OTLP endpoint); otherwise no provider and no
interceptor are installed, so tracing costs nothing. Metrics are exported
the same way when OTEL_METRICS_EXPORTER names an exporter.

The SDK's own environment configuration picks the exporters: the names in
OTEL_*_EXPORTER are its exporters' entry points, `otlp` takes its protocol
from OTEL_EXPORTER_OTLP_[TRACES_|METRICS_]PROTOCOL, and each exporter reads
its endpoint, headers and timeouts itself. Its providers are made here rather
than by the SDK's global set-up, so that each server owns, flushes and shuts
down its own. The resource is the SDK's detection (OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES), with service.name `agentd` when neither names one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from agentd import __version__
from agentd.runtime.lazy import lazy
from agentd.runtime.telemetry import LINK_TO

if TYPE_CHECKING:
    from opentelemetry import propagate, trace
    from opentelemetry.sdk import _configuration as sdk_configuration
    from opentelemetry.sdk import resources as sdk_resources
    from opentelemetry.sdk import trace as sdk_trace
    from opentelemetry.sdk.metrics import export as sdk_metrics_export
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace import export as sdk_trace_export
else:
    # The SDK (some 45 ms of start-up) only for a server that exports or is
    # scraped; propagate (its propagators are entry points) from the first
    # linked stream.
    propagate = lazy("opentelemetry.propagate")
    trace = lazy("opentelemetry.trace")  # tracing on, or a linked stream, only
    sdk_configuration = lazy("opentelemetry.sdk._configuration")
    sdk_resources = lazy("opentelemetry.sdk.resources")
    sdk_trace = lazy("opentelemetry.sdk.trace")
    sdk_trace_export = lazy("opentelemetry.sdk.trace.export")
    sdk_metrics_export = lazy("opentelemetry.sdk.metrics.export")


class OtelEnvironmentError(ValueError):
    """An OTEL_* variable names what no installed package provides."""


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


def resource() -> Resource:
    """What the SDK detects (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME win),
    over agentd's name and version."""
    given = sdk_resources.OTELResourceDetector().detect().attributes
    ours = {sdk_resources.SERVICE_NAME: "agentd", sdk_resources.SERVICE_VERSION: __version__}
    return sdk_resources.Resource.create({key: value for key, value in ours.items() if key not in given})


def _exporter_names(signal: Literal["traces", "metrics"]) -> list[str]:
    names = sdk_configuration._get_exporter_names(signal)
    if not names and signal == "traces" and enabled():  # an OTLP endpoint alone: OTLP, the spec's default
        names = [sdk_configuration._get_exporter_entry_point("otlp", signal)]
    return names


def _exporters(signal: Literal["traces", "metrics"]) -> list[Any]:
    """The exporter classes the environment names for `signal`; OtelEnvironmentError naming the variable."""
    try:
        names = _exporter_names(signal)
        traces, metrics = (names, []) if signal == "traces" else ([], names)
        spans, readers, _ = sdk_configuration._import_exporters(traces, metrics, [])
    except RuntimeError as exc:  # the SDK's word for a name no installed exporter has, or an unknown protocol
        variable = "OTEL_TRACES_EXPORTER" if signal == "traces" else "OTEL_METRICS_EXPORTER"
        shipped = "otlp and console" if signal == "traces" else "otlp, console and prometheus"
        raise OtelEnvironmentError(f"{variable}: {exc} (agentd ships {shipped})") from None
    return list((spans if signal == "traces" else readers).values())


def configure() -> TracerProvider | None:
    """A TracerProvider exporting per the environment, or None when tracing is off."""
    if not enabled():
        return None
    provider = sdk_trace.TracerProvider(resource=resource())
    for exporter in _exporters("traces"):
        provider.add_span_processor(sdk_trace_export.BatchSpanProcessor(exporter()))
    return provider


def metric_readers() -> list[MetricReader]:
    """The readers OTEL_METRICS_EXPORTER asks for (none when unset, or when the SDK is disabled)."""
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true":
        return []
    if os.environ.get("OTEL_METRICS_EXPORTER", "").strip().lower() in ("", "none"):  # as the SDK reads it
        return []
    readers: list[MetricReader] = []
    for exporter in _exporters("metrics"):
        if issubclass(exporter, sdk_metrics_export.MetricReader):
            readers.append(exporter())
        else:
            readers.append(sdk_metrics_export.PeriodicExportingMetricReader(exporter()))
    return readers


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
