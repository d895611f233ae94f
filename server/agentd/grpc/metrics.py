"""The server's metrics: one MeterProvider per server, read by a Prometheus
scrape endpoint (`[server] metrics_port`) and by the exporters
OTEL_METRICS_EXPORTER names (tracing.metric_readers), and the RPC duration
every served call records (`rpc.server.call.duration`, the RPC conventions'
current name, in seconds).

The endpoint is prometheus-client's HTTP server on a thread of its own, over a
registry of this server's (several servers in one process, as in tests, each
expose only their own). It answers every path with the exposition; `/metrics`
is the one to scrape.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

import grpc

from agentd.grpc import tracing
from agentd.runtime.lazy import lazy

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

    import prometheus_client
    from opentelemetry.exporter import prometheus as otel_prometheus
    from opentelemetry.metrics import MeterProvider as MeterProviderAPI
    from opentelemetry.sdk import metrics as sdk_metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader
else:
    # The scrape endpoint only ([server] metrics_port): loaded when one is configured;
    # the SDK when that or an exporter is.
    prometheus_client = lazy("prometheus_client")
    otel_prometheus = lazy("opentelemetry.exporter.prometheus")
    sdk_metrics = lazy("opentelemetry.sdk.metrics")

log = logging.getLogger("agentd.metrics")

#: The bucket boundaries the RPC conventions advise (seconds).
_RPC_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10)
#: The codes the gRPC conventions count as the server's failure (error.type is set for them).
_SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


class RpcMetrics:
    """`rpc.server.call.duration` by method and status code."""

    def __init__(self, provider: MeterProviderAPI) -> None:
        self._duration = provider.get_meter("agentd.grpc").create_histogram(
            "rpc.server.call.duration",
            unit="s",
            description="Measures the duration of an incoming Remote Procedure Call (RPC)",
            explicit_bucket_boundaries_advisory=_RPC_BUCKETS,
        )
        #: Attributes by (method, code): built once each, methods and codes being few.
        self._attributes: dict[tuple[str, grpc.StatusCode], dict[str, str]] = {}

    def record(self, method: str, code: grpc.StatusCode, seconds: float) -> None:
        """`method`: "<package.Service>/<Method>"."""
        attributes = self._attributes.get((method, code))
        if attributes is None:
            attributes = {"rpc.system.name": "grpc", "rpc.method": method, "rpc.response.status_code": code.name}
            if code in _SERVER_ERRORS:
                attributes["error.type"] = code.name
            self._attributes[(method, code)] = attributes
        self._duration.record(seconds, attributes)


class ServerMetrics:
    """The provider a server records into, and its scrape endpoint once served."""

    def __init__(self, provider: MeterProvider, registry: prometheus_client.CollectorRegistry | None) -> None:
        self.provider = provider
        self.rpc = RpcMetrics(provider)
        #: What the scrape endpoint exposes (None: no endpoint).
        self.registry = registry
        self._http: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def serve(self, host: str, port: int) -> int:
        """Starts the scrape endpoint on `host`:`port` (0: any free port); the port bound."""
        assert self.registry is not None, "configure(scrape=True) for an endpoint"
        try:
            self._http, self._thread = prometheus_client.start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            raise OSError(f"cannot serve metrics on {host}:{port} ([server] metrics_port): {exc.strerror}") from exc
        bound: int = self._http.server_port
        log.info("metrics on http://%s:%d/metrics", host, bound)
        return bound

    def shutdown(self) -> None:
        """Stops the endpoint, then flushes and stops the exporters."""
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.provider.shutdown()


def configure(*, scrape: bool) -> ServerMetrics | None:
    """The server's metrics: a Prometheus reader when it is to be scraped, and
    the exporters the environment names; None when neither is asked for."""
    readers: list[MetricReader] = tracing.metric_readers()
    registry = None
    if scrape:
        registry = prometheus_client.CollectorRegistry(auto_describe=True)
        readers.append(otel_prometheus.PrometheusMetricReader(registry=registry))
    if not readers:
        return None
    return ServerMetrics(sdk_metrics.MeterProvider(resource=tracing.resource(), metric_readers=readers), registry)
