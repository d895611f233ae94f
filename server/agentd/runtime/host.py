"""Everything one agentd process hosts, wired together once at start-up, and
the order its backends open and close in."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from agentd.runtime.agent import Agent
from agentd.runtime.background import BackgroundWork
from agentd.runtime.cache import InMemoryServerCache, ServerCache
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.cluster import Cluster
from agentd.runtime.coordination import Coordination, LocalCoordination
from agentd.runtime.identity import tenant_of
from agentd.runtime.lazy import lazy
from agentd.runtime.mcp_tools import McpServers
from agentd.runtime.messages import Signal, utcnow
from agentd.runtime.metrics import Metrics
from agentd.runtime.notifications.store import InMemoryNotificationStore, NotificationStore
from agentd.runtime.overrides import InMemoryOverrideStore, Overrides, OverrideStore
from agentd.runtime.processors.catalogue import default_registry, with_response_cache
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.scoring.service import Scoring, ScoringSettings
from agentd.runtime.scoring.store import InMemoryScoreStore, ScoreStore
from agentd.runtime.storage import BackgroundTask, InMemoryStorage, Storage
from agentd.runtime.threads import LocalOwnership, LocalThreadLog, RouteRequest, ThreadRuntime, ThreadSettings
from agentd.runtime.tools import Tool
from agentd.runtime.workflows.limits import WorkflowLimits

if TYPE_CHECKING:
    from agentd.runtime.notifications import routing as notification_routing
    from agentd.runtime.notifications import service as notification_service
    from agentd.runtime.notifications.policy import ThreadState
    from agentd.runtime.notifications.routing import RouteResult
    from agentd.runtime.notifications.service import DispatchResult, Notifications
    from agentd.runtime.threads import leased, shared_log
    from agentd.runtime.threads.leased import LeasedOwnership
    from agentd.runtime.threads.shared_log import SharedThreadLog
    from agentd.runtime.workflows import definition as workflow_definition
    from agentd.runtime.workflows.definition import Workflow
else:
    # Built with the host's first notification (sent, listed, or dispatched).
    notification_routing = lazy("agentd.runtime.notifications.routing")
    notification_service = lazy("agentd.runtime.notifications.service")
    leased = lazy("agentd.runtime.threads.leased")  # replicas only (a [coordination] on Redis)
    shared_log = lazy("agentd.runtime.threads.shared_log")
    workflow_definition = lazy("agentd.runtime.workflows.definition")  # an agent with workflows only

__all__ = ["App", "Host", "HostConfig", "check_shareable"]


@dataclass
class App:
    """What a `--app` module contributes: agents, processors (name → factory
    taking the options dict), `prepare_step` functions by name, the tools and
    workflows agentd.toml's workflows may name, and `setup`: called with the
    host once its backends are built (before they open), it returns agents
    built on them (memory in `host.storage`, a response cache on `host.cache`)."""

    agents: list[Agent] = field(default_factory=list)
    processors: dict[str, Any] = field(default_factory=dict)
    step_functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
    tools: list[Tool] = field(default_factory=list)
    workflows: list[Workflow] = field(default_factory=list)
    setup: Callable[[Host], Iterable[Agent] | None] | None = None


class HostConfig(Protocol):
    """What `Host.from_config` reads: a loaded configuration with its backends
    built (agentd.config.Config is one)."""

    agents: list[Agent]
    caches: dict[str, ServerCache]
    pricing: dict[str, Any]
    workflow_limits: WorkflowLimits
    #: `[[mcp_servers]]`: the connections its agents' MCP tools go through.
    mcp: McpServers
    #: Editor overrides, beside the threads (None: in memory).
    override_store: OverrideStore | None

    @property
    def cache_backend(self) -> str: ...

    @property
    def backends(self) -> tuple[Storage, NotificationStore, Coordination, Cluster | None]: ...

    @property
    def thread_settings(self) -> ThreadSettings: ...

    @property
    def stream_linger(self) -> float: ...

    @property
    def on_finish_timeout(self) -> float: ...

    @property
    def score_store(self) -> ScoreStore: ...

    @property
    def scoring_settings(self) -> ScoringSettings: ...


def _check_workflows(agents: list[Agent], limits: WorkflowLimits) -> None:
    """Cycles, depth and width of the agents' workflows (ValueError); an
    agent with none has nothing to check, and loads no workflow module."""
    if any(agent.workflows for agent in agents):
        workflow_definition.check_workflows([], agents, limits)


def check_shareable(storage: Storage, *, coordinated: bool) -> None:
    """Replicas (`coordinated`) share threads: ValueError when the storage is each process's own."""
    if coordinated and not storage.shared:
        raise ValueError(
            f"coordination shares threads between replicas, but {storage.backend!r} "
            "storage is what each replica keeps to itself (replicas cannot share a SQLite file): "
            "use storage on Redis, or local coordination for a single replica"
        )


@dataclass
class Host:
    agents: AgentRegistry
    runs: RunRegistry = field(default_factory=RunRegistry)
    #: Processors that agentd.toml and per-call overrides name.
    processors: ProcessorRegistry = field(default_factory=default_registry)
    #: `prepare_step` functions that per-call options name.
    step_functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
    #: The server caches by backend name ("memory" always; "redis" when configured).
    caches: dict[str, ServerCache] = field(default_factory=lambda: {"memory": InMemoryServerCache()})
    #: The backend CacheService operates on.
    cache_backend: str = "memory"
    #: Threads and messages.
    storage: Storage = field(default_factory=InMemoryStorage)
    #: Notification inbox records.
    notification_store: NotificationStore = field(default_factory=InMemoryNotificationStore)
    #: Thread leases: in process (one replica), or on Redis (several replicas).
    coordination: Coordination = field(default_factory=LocalCoordination)
    #: What replicas share besides leases (chunk logs, requests): None for one replica.
    cluster: Cluster | None = None
    #: The thread runtime's settings (log retention, buffers, lease TTL, ...).
    thread_settings: ThreadSettings = field(default_factory=ThreadSettings)
    #: USD per million input/output tokens by "provider/model" (agentd.toml `[pricing]`).
    prices: dict[str, Any] = field(default_factory=dict)
    #: Where the live scorers' scores are kept.
    score_store: ScoreStore = field(default_factory=InMemoryScoreStore)
    scoring_settings: ScoringSettings = field(default_factory=ScoringSettings)
    #: Scores runs after they answered, in the background (bounded; drained on shutdown).
    scoring: Scoring = field(init=False)
    #: How deep workflows may nest and how wide they may run (agentd.toml `[workflow_limits]`).
    workflow_limits: WorkflowLimits = field(default_factory=WorkflowLimits)
    #: The MCP servers agents take tools from, connected for the whole process.
    mcp: McpServers = field(default_factory=McpServers)
    #: Editor overrides of the agents (beside the threads, so replicas share them).
    override_store: OverrideStore = field(default_factory=InMemoryOverrideStore)
    #: Live threads: active runs, signal routing, chunk logs, subscribers.
    threads: ThreadRuntime = field(init=False)
    #: Background tool calls running in this process.
    background: BackgroundWork = field(init=False)

    def __post_init__(self) -> None:
        if self.cache_backend not in self.caches:
            raise ValueError(f"no {self.cache_backend!r} cache is configured")
        check_shareable(self.storage, coordinated=self.coordination.shared)
        self.scoring = Scoring(self.score_store, self.scoring_settings)
        self.runs.telemetry.scoring = self.scoring
        # Cycles, depth and width once, for every agent's workflows (however they were declared).
        _check_workflows(self.agents.list(), self.workflow_limits)
        self.agents.overrides = Overrides(self.override_store, self.agents.tool_catalogue)
        settings = self.thread_settings
        if self.cluster is not None:
            coordination = self.coordination
            ownership: LocalOwnership | LeasedOwnership = leased.LeasedOwnership(coordination, self.cluster, settings)
            log: LocalThreadLog | SharedThreadLog = shared_log.SharedThreadLog(
                self.cluster, subscriber_buffer=settings.subscriber_buffer, patience=settings.lease_ttl
            )
        else:
            ownership = LocalOwnership()
            log = LocalThreadLog(settings)
        self.threads = ThreadRuntime(
            self.runs, self.storage, self.agents, log=log, ownership=ownership, settings=settings
        )
        self.background = BackgroundWork(
            self.storage,
            self.coordination,
            replica_id=self.threads.ownership.replica_id,
            max_jobs=settings.max_background_jobs,
        )
        self.background.settled = self.threads.settled
        self.background.route = self._route_continuation
        self.runs.background = self.background
        self._background_sweeper: asyncio.Task[None] | None = None
        # `response-cache` and `token-cost-control` need the server's cache instances, so they are bound here.
        self.processors = with_response_cache(self.processors, self.caches, self.prices, self.cache_backend)

    @classmethod
    def from_config(
        cls, config: HostConfig, app: App | None = None, processors: ProcessorRegistry | None = None
    ) -> Host:
        """The host a loaded configuration (and an `--app` module) describe;
        `processors` is the registry the configuration was loaded with."""
        app = app or App()
        storage, notification_store, coordination, cluster = config.backends
        host = cls(
            agents=AgentRegistry([*config.agents, *app.agents]),
            processors=processors or default_registry().extended(app.processors),
            step_functions=dict(app.step_functions),
            caches=config.caches,
            cache_backend=config.cache_backend,
            prices=dict(config.pricing),
            workflow_limits=config.workflow_limits,
            storage=storage,
            notification_store=notification_store,
            coordination=coordination,
            cluster=cluster,
            thread_settings=config.thread_settings,
            score_store=config.score_store,
            scoring_settings=config.scoring_settings,
            mcp=config.mcp,
            override_store=config.override_store or InMemoryOverrideStore(),
        )
        host.runs.linger = config.stream_linger
        host.runs.on_finish_timeout = config.on_finish_timeout
        for agent in (app.setup(host) if app.setup is not None else None) or ():
            host.add_agent(agent)
        return host

    def add_agent(self, agent: Agent) -> None:
        """Hosts one more agent (AlreadyExists when its id is taken; ValueError
        when its workflows cannot run)."""
        _check_workflows([agent], self.workflow_limits)
        self.agents.add(agent)
        if agent.delivery_policy is not None:
            self.notifications.set_policy(agent.id, agent.delivery_policy)

    @cached_property
    def notifications(self) -> Notifications:
        """The notification inbox and its delivery policies (one per agent):
        built when first used, so a server never sent a notification loads none
        of the notifications' modules but the store's."""
        return notification_service.Notifications(
            self.notification_store,
            policies={a.id: a.delivery_policy for a in self.agents.list() if a.delivery_policy is not None},
        )

    @property
    def cache(self) -> ServerCache:
        return self.caches[self.cache_backend]

    def enable_metrics(self, provider: Any) -> Metrics:
        """Records this host's runs, model calls, tripwires and take-overs into
        `provider` (a MeterProvider), and lets it observe the live counts."""
        metrics = self.runs.telemetry.enable_metrics(provider)
        metrics.observe(
            active_runs=lambda: len(self.runs.active()),
            subscriptions=self.threads.log.subscribers,
            queued_messages=self.threads.queued_messages,
            caches=self.caches,
        )
        return metrics

    async def open(self) -> int:
        """Opens the backends, connects the MCP servers (a server slow to start
        or down is retried in the background), then starts the thread runtime
        (which replays the acknowledged signals a stopped process left) and reports failed the
        background work a stopped process left; how many signals it replayed."""
        await self.storage.open()
        await self.notification_store.open()
        await self.score_store.open()
        await self.mcp.open()
        await self.agents.overrides.open(agent.id for agent in self.agents.list())
        replayed = await self.threads.open()
        await self.background.recover()
        if self.coordination.shared:  # a dead replica's work is found by the others
            every = self.thread_settings.sweep_every
            self._background_sweeper = asyncio.get_running_loop().create_task(
                self._sweep_background(every), name="background sweeper"
            )
        return replayed

    async def _sweep_background(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.background.recover()
            except Exception as exc:
                raise_if_cancelling(exc)  # stopped: a store that turned that into its error must not keep it going
                logging.getLogger("agentd.background").exception("background sweep failed; retrying")

    async def _route_continuation(self, task: BackgroundTask, signal: Signal) -> None:
        """Background work ended: a run on its thread, queued behind an active one, wherever the thread is held."""
        await self.threads.route(
            RouteRequest(
                agent_id=task.agent_id,
                signal=signal,
                resource_id=task.resource_id,
                thread_id=task.thread_id,
                queue=True,
                tenant=tenant_of(task.thread_id),
            )
        )

    async def drain(self, grace: float) -> None:
        """Refuses new runs, lets runs finish within `grace` seconds (the rest
        are aborted, SERVER_SHUTDOWN), stops the background work (its records
        stay, reported failed at the next start), ends the subscriptions, then
        gives the runs' pending scores up to `grace` seconds more (the rest are
        not scored)."""
        await self.runs.shutdown(grace)
        if self._background_sweeper is not None:
            self._background_sweeper.cancel()
        await self.background.close()
        await self.threads.shutdown()
        await self.scoring.drain(grace)

    async def close(self) -> None:
        """Closes the MCP connections and every backend (after `drain`, and
        after the transport stopped)."""
        await self.mcp.close()
        for cache in self.caches.values():
            await cache.close()
        await self.storage.close()
        await self.notification_store.close()
        await self.score_store.close()
        await self.agents.overrides.close()
        await self.coordination.close()
        if self.cluster is not None:
            await self.cluster.close()

    async def route_notification(
        self, signal: Any, *, agent_id: str, resource_id: str, thread_id: str, idle_behavior: Any, stream_options: Any
    ) -> RouteResult:
        """The notification service's way into a thread: the signal routing path."""
        routing = await self.threads.route(
            RouteRequest(
                agent_id=agent_id,
                signal=signal,
                resource_id=resource_id,
                thread_id=thread_id,
                if_active="deliver",  # the notification policy decided already (not signal_delivery)
                if_idle=idle_behavior,
                stream_options=stream_options,
                tenant=tenant_of(thread_id),  # a stored notification's ids were scoped when it was sent
            )
        )
        return notification_routing.RouteResult(action=routing.action, run_id=routing.run_id)  # type: ignore[arg-type]

    async def thread_state(self, resource_id: str, thread_id: str) -> ThreadState:
        return "active" if await self.threads.active_run_id(resource_id, thread_id) is not None else "idle"

    async def dispatch_notifications(self, now: Any = None) -> DispatchResult:
        """Delivers what fell due (the server runs this periodically; tests step it)."""
        return await self.notifications.dispatch_due(now, route=self.route_notification, thread_state=self.thread_state)

    async def dispatch_notifications_if_due(self) -> None:
        """The server's periodic pass. Until this host has built its notification
        service (a notification sent, listed or dispatched here), the store alone
        is asked whether any is due: loading the service's modules holds the
        event loop for tens of milliseconds, which a server under load that
        never sees a notification should not pay five seconds after it starts."""
        if "notifications" in self.__dict__ or await self.notification_store.list_due(utcnow(), limit=1):
            await self.dispatch_notifications()
