"""Everything one agentd process hosts, wired together once at start-up."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.cache import InMemoryServerCache, ServerCache
from agentd.runtime.cluster import Cluster
from agentd.runtime.coordination import DEFAULT_LEASE_TTL_MS, Coordination, LocalCoordination
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.notifications import (
    DispatchResult,
    InMemoryNotificationStore,
    Notifications,
    NotificationStore,
    RouteResult,
    ThreadState,
)
from agentd.runtime.processors.catalogue import default_registry
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.storage import InMemoryStorage, Storage
from agentd.runtime.threads import RouteRequest, ThreadRuntime


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
    #: How long a thread's lease lives without a renewal.
    lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS
    #: USD per million input/output tokens by "provider/model" (agentd.toml `[pricing]`).
    prices: dict[str, Any] = field(default_factory=dict)
    #: Live threads: active runs, signal routing, chunk logs, subscribers.
    threads: ThreadRuntime = field(init=False)
    #: The notification inbox and its delivery policies (one per agent).
    notifications: Notifications = field(init=False)

    def __post_init__(self) -> None:
        if self.cluster is not None:
            from agentd.runtime.replicas import ReplicatedThreads

            self.threads = ReplicatedThreads(
                self.runs, self.storage, self.coordination, self.cluster, lease_ttl_ms=self.lease_ttl_ms
            )
        else:
            self.threads = ThreadRuntime(self.runs, self.storage)
        self.threads.agents = self.agents
        self.notifications = Notifications(
            self.notification_store,
            policies={a.id: a.delivery_policy for a in self.agents.list() if a.delivery_policy is not None},
        )
        if self.cache_backend not in self.caches:
            raise ValueError(f"no {self.cache_backend!r} cache is configured")
        if self.coordination.backend == "redis" and self.storage.backend != "redis":
            raise ValueError(
                f"redis coordination shares threads between replicas, but {self.storage.backend!r} storage "
                "is each replica's own: use RedisStorage, or LocalCoordination for a single replica"
            )
        # `response-cache` and `token-cost-control` need the server's cache instances, so they are bound here.
        self.processors = with_response_cache(self.processors, self.caches, self.prices, self.cache_backend)

    @property
    def cache(self) -> ServerCache:
        return self.caches[self.cache_backend]

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
                if_idle=idle_behavior,
                stream_options=stream_options,
            )
        )
        return RouteResult(action=routing.action, run_id=routing.run_id)  # type: ignore[arg-type]

    async def thread_state(self, resource_id: str, thread_id: str) -> ThreadState:
        return "active" if await self.threads.active_run_id(resource_id, thread_id) is not None else "idle"

    async def dispatch_notifications(self, now: Any = None) -> DispatchResult:
        """Delivers what fell due (the server runs this periodically; tests step it)."""
        return await self.notifications.dispatch_due(now, route=self.route_notification, thread_state=self.thread_state)


def with_response_cache(
    registry: ProcessorRegistry,
    caches: dict[str, ServerCache],
    prices: Mapping[str, Any] | None = None,
    default_backend: str = "memory",
) -> ProcessorRegistry:
    """Binds the processors that need the server's caches: `response-cache`, and
    `token-cost-control` (also bound to the `[pricing]` table). Both use
    `default_backend` (the server's `[cache] backend`) unless told otherwise."""
    from agentd.runtime.processors.builtins.response_cache import response_cache_factory
    from agentd.runtime.processors.builtins.token_cost_control import token_cost_control_factory

    def checked(factory: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        def build(options: dict[str, Any]) -> Any:
            try:
                return factory(options)
            except ValueError as exc:
                raise InvalidArgument.field("options", str(exc)) from None

        return build

    return registry.extended(
        {
            "response-cache": checked(response_cache_factory(caches, default_backend)),
            "token-cost-control": checked(token_cost_control_factory(caches, prices, default_backend)),
        }
    )
