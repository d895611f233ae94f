"""The gRPC server: services, health, reflection, tracing, metrics, graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from agentd.grpc import metrics, service, tracing
from agentd.grpc.agent_service import AgentService
from agentd.grpc.auth import Authenticator
from agentd.grpc.cache_service import CacheService
from agentd.grpc.chunks import batch_budget
from agentd.grpc.gate import Gate
from agentd.grpc.health import HealthService
from agentd.grpc.reflection import add_reflection
from agentd.grpc.reflection_gate import ReflectionGate
from agentd.grpc.signal_service import SignalService
from agentd.grpc.thread_service import ThreadService
from agentd.grpc.tls import TLSSettings, server_credentials
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.health import StorageProbe
from agentd.runtime.host import Host
from agentd_proto.v1 import (
    agent_service_pb2,
    agent_service_pb2_grpc,
    cache_service_pb2,
    cache_service_pb2_grpc,
    signal_service_pb2,
    signal_service_pb2_grpc,
    thread_service_pb2,
    thread_service_pb2_grpc,
)

log = logging.getLogger("agentd.server")

SERVICES = (
    agent_service_pb2.DESCRIPTOR.services_by_name["AgentService"],
    thread_service_pb2.DESCRIPTOR.services_by_name["ThreadService"],
    signal_service_pb2.DESCRIPTOR.services_by_name["SignalService"],
    cache_service_pb2.DESCRIPTOR.services_by_name["CacheService"],
)
SERVICE_NAMES = tuple(s.full_name for s in SERVICES)
#: The largest message agentd sends or receives: grpc's own default, which
#: most clients also receive at most.
DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
#: grpc core queues the calls that arrive before the server asks for them (the
#: grpc.aio server asks for one at a time, on the event loop the handlers run
#: on) and, past 1,000 waiting, cancels new ones at random, every one past
#: 3,000: a burst of 2,000 Subscribes (every client reconnecting at once) lost
#: a tenth of them, CANCELLED before agentd saw them. A subscription is cheap
#: to accept, so agentd lets ten times as many wait; a call still waiting after
#: grpc's 30 s is cancelled all the same.
SERVER_OPTIONS = (
    ("grpc.server.max_pending_requests", 10_000),
    ("grpc.server.max_pending_requests_hard_limit", 20_000),
)
#: What reports NOT_SERVING while storage does not answer (the overall "" too).
STORAGE_SERVICES = ("", "agentd.v1.ThreadService", "agentd.v1.SignalService")


class GenericOnly:
    """What grpc's generated `add_*_to_server` functions are handed in place of
    the server, so the services they add are served by their generic handler
    alone. grpc.aio's server keeps a request pending for each registered method
    and waits on all of them for every call it accepts, anyone's: health's
    three methods and reflection's one made that wait 1.5% of a Generate's
    instructions under load, for services called seldom. (agentd's own
    services are registered as generic handlers, by `service.register`.)"""

    def __init__(self, server: grpc.aio.Server) -> None:
        self.server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        """Served already: the generated code adds the same handlers as a generic one first."""


class AgentdServer:
    """One grpc.aio server hosting agentd's services on one address."""

    def __init__(
        self,
        host: Host,
        *,
        shutdown_grace: float = 10.0,
        tracer_provider: Any = None,
        dispatch_interval: float = 5.0,
        health_probe_interval: float = 1.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        gate: Gate | None = None,
        tls: TLSSettings | None = None,
        reflection_mode: str = "open",
        default_deadline: float | None = None,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
    ) -> None:
        self.host = host
        #: Who is calling and what they may do: authentication, roles, limits.
        self.gate = gate or Gate(Authenticator())
        self.tls = tls
        #: Flips the storage-bound services' health while storage does not answer.
        self.storage_probe = StorageProbe(host.storage, interval=health_probe_interval)
        self._probing: asyncio.Task[None] | None = None
        self.shutdown_grace = shutdown_grace
        self.health = HealthService()
        # An explicit provider (tests) wins over the OTEL_* environment.
        self.tracer_provider = tracer_provider if tracer_provider is not None else tracing.configure()
        interceptors = []
        if self.tracer_provider is not None:
            from opentelemetry.instrumentation.grpc import aio_server_interceptor

            def outside_long_streams(details: Any) -> bool:
                method = details.method
                return not tracing.long_lived(method.decode() if isinstance(method, bytes) else method)

            interceptors.append(
                aio_server_interceptor(tracer_provider=self.tracer_provider, filter_=outside_long_streams)  # type: ignore[no-untyped-call]
            )
            host.runs.telemetry.enable(self.tracer_provider, capture_content=tracing.capture_content())
        #: The Prometheus endpoint's address (`metrics_port` None: no endpoint; 0: any free port).
        self.metrics_address = (metrics_host, metrics_port)
        self.metrics = metrics.configure(scrape=metrics_port is not None)
        if self.metrics is not None:
            host.enable_metrics(self.metrics.provider)
        # so_reuseport off: a second server on a taken port must fail, not share it.
        options = [
            ("grpc.so_reuseport", 0),
            ("grpc.max_receive_message_length", max_message_bytes),
            ("grpc.max_send_message_length", max_message_bytes),
            *SERVER_OPTIONS,
        ]
        if reflection_mode == "authenticated":
            interceptors.append(ReflectionGate(self.gate.authenticator))
        self.server = grpc.aio.server(interceptors=interceptors, options=options)
        agents, threads, signals, cache = SERVICES
        batch_bytes = batch_budget(max_message_bytes)
        servicers = (
            (agents, agent_service_pb2_grpc.AgentServiceServicer, AgentService(host, batch_bytes)),
            (threads, thread_service_pb2_grpc.ThreadServiceServicer, ThreadService(host, batch_bytes)),
            (signals, signal_service_pb2_grpc.SignalServiceServicer, SignalService(host)),
            (cache, cache_service_pb2_grpc.CacheServiceServicer, CacheService(host)),
        )
        rpc_metrics = self.metrics.rpc if self.metrics is not None else None
        policy = service.CallPolicy(self.gate, max_message_bytes, default_deadline, rpc_metrics)
        for descriptor, base, servicer in servicers:
            service.register(self.server, descriptor, base, servicer, policy)
        # Health stays open: load balancers and orchestrators ask it without credentials.
        health_pb2_grpc.add_HealthServicer_to_server(self.health, GenericOnly(self.server))
        if reflection_mode != "off":
            add_reflection(self.server, (*SERVICE_NAMES, health.SERVICE_NAME))
        self.port = 0
        #: The metrics endpoint's port once serving (None: no endpoint).
        self.metrics_port: int | None = None
        self._stopped = asyncio.Event()
        #: How often notifications that fell due are delivered (0: never; tests step it).
        self.dispatch_interval = dispatch_interval
        self._dispatcher: asyncio.Task[None] | None = None

    async def start(self, address: str) -> int:
        # Bind first: a second process on a taken port stops here, before it
        # replays (and pays for) acknowledged work that the first one owns.
        try:
            if self.tls is not None:
                self.port = self.server.add_secure_port(address, server_credentials(self.tls))
            else:
                self.port = self.server.add_insecure_port(address)
        except RuntimeError as exc:  # grpc reports a taken or bad address this way
            raise OSError(f"cannot listen on {address}: address in use or invalid") from exc
        metrics_host, metrics_port = self.metrics_address
        if self.metrics is not None and metrics_port is not None:
            self.metrics_port = self.metrics.serve(metrics_host, metrics_port)
        recovered = await self.host.open()  # replays acknowledged signals a stopped process left behind
        if recovered:
            log.info("recovered %d acknowledged signal(s) into new runs", recovered)
        await self.server.start()
        for name in ("", *SERVICE_NAMES):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.dispatch_interval > 0:
            self._dispatcher = asyncio.create_task(self._dispatch_forever(), name="notification dispatcher")
        self._probing = asyncio.create_task(self.storage_probe.watch(self._storage_health), name="storage probe")
        return self.port

    async def _storage_health(self, healthy: bool) -> None:
        """Threads and signals need storage; agents (without memory) and the
        cache do not, so they stay SERVING: the cache fails open."""
        status = health_pb2.HealthCheckResponse.SERVING if healthy else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in STORAGE_SERVICES:
            await self.health.set(name, status)

    async def _dispatch_forever(self) -> None:
        while True:
            await asyncio.sleep(self.dispatch_interval)
            try:
                await self.host.dispatch_notifications_if_due()
            except Exception as exc:
                raise_if_cancelling(exc)  # stopped: a store that turned that into its error must not keep it going
                log.exception("notification dispatch failed; retrying at the next interval")

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: health NOT_SERVING first, new runs refused, runs
        that finish within the grace period finish, the rest are aborted with
        reason SERVER_SHUTDOWN (their streams end with that abort chunk and OK)."""
        if self._stopped.is_set():
            return
        grace = self.shutdown_grace if grace is None else grace
        for task in (self._dispatcher, self._probing):
            if task is not None:
                task.cancel()
        await self.health.enter_graceful_shutdown()
        await self.host.drain(grace)  # open subscriptions end with UNAVAILABLE
        # Streams of aborted runs are flushing their last chunks; give them a moment.
        await self.server.stop(grace=2.0)
        if self.tracer_provider is not None:
            self.tracer_provider.shutdown()
        if self.metrics is not None:  # the exporters' last export: every run has ended
            await asyncio.to_thread(self.metrics.shutdown)
        await self.host.close()
        self._stopped.set()
