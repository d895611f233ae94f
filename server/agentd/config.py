"""agentd.toml: server settings and agents. Precedence: CLI flag > AGENTD_*
environment variable > file > built-in default."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentd.auth_config import AuthConfigError, AuthSettings, parse_auth, parse_tls
from agentd.grpc.server import DEFAULT_MAX_MESSAGE_BYTES
from agentd.grpc.tls import TLSSettings
from agentd.runtime.agent import Agent
from agentd.runtime.cache import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SIZE,
    DEFAULT_TTL_SECONDS,
    InMemoryServerCache,
    ServerCache,
)
from agentd.runtime.cluster import Cluster
from agentd.runtime.coordination import DEFAULT_LEASE_TTL_MS, Coordination, LocalCoordination
from agentd.runtime.errors import AgentdError
from agentd.runtime.host import check_shareable
from agentd.runtime.memory import Memory
from agentd.runtime.messages import Message
from agentd.runtime.models.router import check_model_spec
from agentd.runtime.notifications import DeliveryPolicy, InMemoryNotificationStore, NotificationStore
from agentd.runtime.options import (
    ExecutionOptions,
    MapStep,
    ModelSettings,
    ParallelStep,
    ProcessorSpec,
    ProcessorWorkflowSpec,
)
from agentd.runtime.processors.builtins.token_cost_control import Price, parse_prices
from agentd.runtime.processors.catalogue import default_registry, with_response_cache
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.redact import add_secret
from agentd.runtime.signals import ActiveDelivery, signal_delivery_policy
from agentd.runtime.storage import InMemoryStorage, Storage
from agentd.runtime.threads import ThreadSettings as RuntimeThreadSettings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 50051
DEFAULT_GRACE = 10.0
#: Read from the working directory when neither --config nor AGENTD_CONFIG names a file.
DEFAULT_CONFIG = "agentd.toml"


class ConfigError(ValueError):
    """agentd.toml is invalid; the message names the offending key."""


@dataclass
class ServerSettings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    shutdown_grace_seconds: float = DEFAULT_GRACE
    #: The largest message the server sends or receives; a unary reply over it is RESOURCE_EXHAUSTED.
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    #: How often storage is probed for the health service.
    health_probe_seconds: float = 1.0
    #: Reflection for grpcurl: "open", "authenticated" (a caller who could call anything) or "off".
    reflection: str = "open"
    #: The deadline a unary call gets when it carries none.
    default_deadline_seconds: float = 300.0
    #: TLS (and mutual TLS) for the listening port; None: plaintext.
    tls: TLSSettings | None = None
    #: The Prometheus scrape endpoint's port, on `host` (0: any free port); None: no endpoint.
    metrics_port: int | None = None


@dataclass
class CacheSettings:
    #: The backend CacheService operates on: "memory" or "redis".
    backend: str = "memory"
    max_size: int = DEFAULT_MAX_SIZE
    #: The memory cache's bound in bytes (an estimate of its keys and values).
    max_bytes: int = DEFAULT_MAX_BYTES
    ttl_seconds: float = DEFAULT_TTL_SECONDS
    #: Set to have a Redis cache (required when backend = "redis").
    redis_url: str | None = None
    key_prefix: str = "agentd:cache:"
    socket_timeout: float = 2.0
    max_connections: int = 50


@dataclass
class StorageSettings:
    #: "sqlite" (embedded default), "memory" (lost on exit) or "redis".
    backend: str = "sqlite"
    path: str = "agentd-data/agentd.db"
    redis_url: str | None = None
    key_prefix: str = "agentd:store:"


@dataclass
class CoordinationSettings:
    #: "local" (one replica, the default) or "redis" (several replicas on one Redis:
    #: thread leases, shared chunk logs, requests between replicas; storage and
    #: cache then default to the same Redis, and storage must be on Redis).
    backend: str = "local"
    #: Defaults to storage.redis_url (or cache.redis_url).
    redis_url: str | None = None
    key_prefix: str = "agentd:lease:"
    lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS
    #: Threads' chunk logs, run markers and request channels.
    cluster_key_prefix: str = "agentd:cluster:"
    #: A thread's chunk log is dropped this long after its last chunk
    #: (`threads.log_retention` bounds its length).
    log_ttl_seconds: float = 86_400.0


@dataclass
class ThreadSettings:
    #: How long a run waits for a client tool's answer (Connect) before the model sees a tool error.
    client_tool_timeout_seconds: float = 120.0
    #: Chunks a subscriber may lag before it gets a fell-behind marker.
    subscriber_buffer: int = 1024
    #: Chunks kept per thread for resuming subscribers.
    log_retention: int = 10_000
    #: One replica: the threads whose chunk logs are kept, the bytes they may hold,
    #: and how long a log nobody watches outlives its last chunk.
    log_max_threads: int = 10_000
    log_max_bytes: int = 64 * 1024 * 1024
    log_idle_ttl_seconds: float = 600.0
    #: How often notifications that fell due are delivered.
    notification_dispatch_interval_seconds: float = 5.0


@dataclass
class AttachmentSettings:
    #: Let attachment downloads reach loopback, private and link-local addresses
    #: (off: a caller's URL cannot make agentd fetch from inside its network).
    allow_private_networks: bool = False


@dataclass
class Config:
    server: ServerSettings = field(default_factory=ServerSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    storage_settings: StorageSettings = field(default_factory=StorageSettings)
    coordination_settings: CoordinationSettings = field(default_factory=CoordinationSettings)
    threads: ThreadSettings = field(default_factory=ThreadSettings)
    attachments: AttachmentSettings = field(default_factory=AttachmentSettings)
    #: Who may call, and each caller's limits.
    auth: AuthSettings = field(default_factory=AuthSettings)
    #: Threads and messages, built from `storage_settings`.
    storage: Storage | None = None
    notification_store: NotificationStore | None = None
    #: Thread leases, built from `coordination_settings`.
    coordination: Coordination | None = None
    #: Shared chunk logs and replica requests (redis coordination only).
    cluster: Cluster | None = None
    agents: list[Agent] = field(default_factory=list)
    #: The server caches by backend, built from `cache`.
    caches: dict[str, ServerCache] = field(default_factory=dict)
    #: `[pricing."provider/model"] input = ..., output = ...`: USD per million tokens.
    pricing: dict[str, Price] = field(default_factory=dict)
    path: Path | None = None

    @property
    def cache_backend(self) -> str:
        return self.cache.backend

    @property
    def backends(self) -> tuple[Storage, NotificationStore, Coordination, Cluster | None]:
        """The built backends (`load` builds them all)."""
        assert self.storage is not None and self.notification_store is not None and self.coordination is not None
        return self.storage, self.notification_store, self.coordination, self.cluster

    @property
    def thread_settings(self) -> RuntimeThreadSettings:
        return RuntimeThreadSettings(
            log_retention=self.threads.log_retention,
            log_max_threads=self.threads.log_max_threads,
            log_max_bytes=self.threads.log_max_bytes,
            log_idle_ttl=self.threads.log_idle_ttl_seconds,
            subscriber_buffer=self.threads.subscriber_buffer,
            client_tool_timeout=self.threads.client_tool_timeout_seconds,
            lease_ttl_ms=self.coordination_settings.lease_ttl_ms,
        )


def _metrics_port(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 65535:
        raise ConfigError(
            f"server.metrics_port: {value!r} is not a port number (1-65535, or 0 for any free port); "
            "leave it out to serve no metrics"
        )
    return value


def _cache_settings(table: Any) -> CacheSettings:
    if not isinstance(table, dict):
        raise ConfigError("cache: must be a table")
    allowed = {
        "backend",
        "max_size",
        "max_bytes",
        "ttl_seconds",
        "redis_url",
        "key_prefix",
        "socket_timeout",
        "max_connections",
    }
    _check_keys(table, allowed, "cache")
    settings = CacheSettings(**table)
    if settings.backend not in ("memory", "redis"):
        raise ConfigError(f"cache.backend: {settings.backend!r} is not memory or redis")
    if settings.backend == "redis" and not settings.redis_url:
        raise ConfigError("cache.redis_url: required when cache.backend is redis")
    return settings


def _storage_settings(table: Any) -> StorageSettings:
    if not isinstance(table, dict):
        raise ConfigError("storage: must be a table")
    _check_keys(table, {"backend", "path", "redis_url", "key_prefix"}, "storage")
    settings = StorageSettings(**table)
    if settings.backend not in ("sqlite", "memory", "redis"):
        raise ConfigError(f"storage.backend: {settings.backend!r} is not sqlite, memory or redis")
    if settings.backend == "redis" and not settings.redis_url:
        raise ConfigError("storage.redis_url: required when storage.backend is redis")
    return settings


def _coordination_settings(table: Any, storage_table: Any, cache_table: Any) -> CoordinationSettings:
    """Parsed first: with redis coordination, storage and cache default to the
    same Redis (their tables are given the defaults in place)."""
    if not isinstance(table, dict):
        raise ConfigError("coordination: must be a table")
    _check_keys(table, set(CoordinationSettings.__dataclass_fields__), "coordination")
    settings = CoordinationSettings(**table)
    if settings.backend not in ("local", "redis"):
        raise ConfigError(f"coordination.backend: {settings.backend!r} is not local or redis")
    ttl = settings.lease_ttl_ms
    if isinstance(ttl, bool) or not isinstance(ttl, int) or ttl < 1:
        raise ConfigError(f"coordination.lease_ttl_ms: {settings.lease_ttl_ms!r} is not a positive whole number")
    if not isinstance(settings.log_ttl_seconds, (int, float)) or settings.log_ttl_seconds <= 0:
        raise ConfigError(f"coordination.log_ttl_seconds: {settings.log_ttl_seconds!r} is not a positive number")
    if settings.backend == "redis" and isinstance(storage_table, dict) and isinstance(cache_table, dict):
        url = settings.redis_url or storage_table.get("redis_url") or cache_table.get("redis_url")
        settings.redis_url = url
        for defaults in (storage_table, cache_table):
            if "backend" not in defaults:
                defaults.update(backend="redis", redis_url=defaults.get("redis_url") or url)
        if not url and storage_table.get("backend") == "redis":  # else the storage is refused first, below
            raise _coordination_url_required()
    return settings


def _coordination_url_required() -> ConfigError:
    return ConfigError("coordination.redis_url: required when coordination.backend is redis")


def build_coordination(settings: CoordinationSettings) -> Coordination:
    """The configured thread leases: in process, or on Redis."""
    if settings.backend == "redis":
        from agentd.backends.redis_coordination import RedisCoordination

        return RedisCoordination(settings.redis_url, key_prefix=settings.key_prefix)
    return LocalCoordination()


def build_cluster(settings: CoordinationSettings, threads: ThreadSettings) -> Cluster | None:
    """What replicas share besides leases (None for one replica)."""
    if settings.backend != "redis":
        return None
    from agentd.backends.redis_cluster import RedisCluster

    assert settings.redis_url is not None
    return RedisCluster(
        settings.redis_url,
        key_prefix=settings.cluster_key_prefix,
        log_retention=threads.log_retention,
        log_ttl_ms=int(settings.log_ttl_seconds * 1000),
    )


def build_storage(settings: StorageSettings, base: Path | None = None) -> Storage:
    """The configured storage; a relative SQLite path is relative to `base`
    (the config file's folder), else to the working directory."""
    if settings.backend == "memory":
        return InMemoryStorage()
    if settings.backend == "redis":
        from agentd.backends.redis_storage import RedisStorage

        return RedisStorage(settings.redis_url, key_prefix=settings.key_prefix)
    from agentd.backends.sqlite_storage import SQLiteStorage

    path = Path(settings.path)
    return SQLiteStorage(path if path.is_absolute() or base is None else base / path)


def build_caches(settings: CacheSettings) -> dict[str, ServerCache]:
    """The in-memory cache always; a Redis cache when a URL is configured."""
    caches: dict[str, ServerCache] = {
        "memory": InMemoryServerCache(
            max_size=settings.max_size, max_bytes=settings.max_bytes, ttl=settings.ttl_seconds
        )
    }
    if settings.redis_url:
        from agentd.backends.redis_cache import RedisServerCache

        caches["redis"] = RedisServerCache(
            url=settings.redis_url,
            key_prefix=settings.key_prefix,
            ttl=settings.ttl_seconds,
            socket_timeout=settings.socket_timeout,
            socket_connect_timeout=settings.socket_timeout,
            max_connections=settings.max_connections,
        )
    return caches


_AGENT_KEYS = {
    "id",
    "name",
    "description",
    "model",
    "instructions",
    "metadata",
    "default_options",
    "max_processor_retries",
    "input_processors",
    "output_processors",
    "error_processors",
    "error_processor_defaults",
    "request_context_schema",
    "memory",
    "notifications",
    "signal_delivery",
    "fallback_models",
}
_OPTION_KEYS = {"max_steps", "provider_options", "model_settings", "request_context"}


def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")


def _instructions(value: Any, where: str) -> str | list[str | Message]:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ConfigError(f"{where}.instructions: a string, or a list of strings and {{content, provider_options}}")
    out: list[str | Message] = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("content"), str):
            _check_keys(item, {"content", "provider_options"}, f"{where}.instructions[{i}]")
            out.append(Message.system(item["content"], item.get("provider_options")))
        else:
            raise ConfigError(f"{where}.instructions[{i}]: a string or a {{content, provider_options}} table")
    return out


def _options(table: Any, where: str) -> ExecutionOptions:
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    _check_keys(table, _OPTION_KEYS, where)
    settings = table.get("model_settings")
    if settings is not None:
        if not isinstance(settings, dict):
            raise ConfigError(f"{where}.model_settings: must be a table")
        try:
            model_settings = ModelSettings(**settings)
        except TypeError as exc:
            raise ConfigError(f"{where}.model_settings: {exc}") from None
    return ExecutionOptions(
        max_steps=table.get("max_steps"),
        provider_options=table.get("provider_options"),
        model_settings=model_settings if settings is not None else None,
        request_context=table.get("request_context"),
    )


def _processor_spec(entry: Any, where: str) -> ProcessorSpec:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ConfigError(f"{where}: a table with name (and optional id, options)")
    _check_keys(entry, {"name", "id", "options"}, where)
    return ProcessorSpec(entry["name"], entry.get("id"), dict(entry.get("options", {})))


def _processors(entries: Any, where: str, registry: ProcessorRegistry, lane: str) -> list[Any]:
    """[{name, id?, options?}] or [{workflow = {id, steps = [{processor|parallel|map}]}}]."""
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: a list of processor tables")
    out: list[Any] = []
    for i, entry in enumerate(entries):
        item = f"{where}[{i}]"
        try:
            if isinstance(entry, dict) and "workflow" in entry:
                if lane == "error":
                    raise ConfigError(f"{item}: workflows cannot run in the error lane")
                flow = entry["workflow"]
                _check_keys(flow, {"id", "steps"}, f"{item}.workflow")
                steps: list[Any] = []
                for j, step in enumerate(flow.get("steps", [])):
                    spath = f"{item}.workflow.steps[{j}]"
                    if "processor" in step:
                        steps.append(_processor_spec(step["processor"], f"{spath}.processor"))
                    elif "parallel" in step:
                        steps.append(
                            ParallelStep(
                                tuple(
                                    _processor_spec(b, f"{spath}.parallel[{k}]") for k, b in enumerate(step["parallel"])
                                )
                            )
                        )
                    elif "map" in step:
                        steps.append(MapStep(str(step["map"])))
                    else:
                        raise ConfigError(f"{spath}: one of processor, parallel, map")
                out.append(registry.build_workflow(ProcessorWorkflowSpec(str(flow.get("id", "")), tuple(steps))))
            else:
                out.append(registry.build(_processor_spec(entry, item)))
        except AgentdError as exc:
            detail = "; ".join(v.description for v in exc.violations) or exc.message
            raise ConfigError(f"{item}: {detail}") from None
        except ValueError as exc:
            raise ConfigError(f"{item}: {exc}") from None
    return out


def _memory(table: Any, where: str, storage: Storage | None) -> Memory:
    if table is True:
        table = {}
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: true, or a table with last_messages")
    _check_keys(table, {"last_messages"}, where)
    assert storage is not None
    try:
        return Memory(storage, last_messages=int(table.get("last_messages", 10)))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _fallbacks(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: a list of provider/model strings")
    for i, spec in enumerate(value):
        try:
            check_model_spec(spec)
        except AgentdError as exc:
            raise ConfigError(f"{where}[{i}]: {exc.violations[0].description if exc.violations else exc}") from None
    return list(value)


def _policy(table: Any, where: str) -> DeliveryPolicy:
    """`notifications = { priorities = {...}, sources = {...}, rules = [...], default = ... }`."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: a table with priorities, sources, rules and default")
    try:
        return DeliveryPolicy.from_config(table)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _signal_delivery(table: Any, where: str) -> dict[str, ActiveDelivery]:
    """`signal_delivery = { user = "queue" }`: per signal category, on an active thread."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: a table of signal type = deliver, queue, persist or discard")
    try:
        return signal_delivery_policy(table)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def build_notification_store(settings: StorageSettings, base: Path | None = None) -> NotificationStore:
    """Inbox records beside the threads: in the SQLite file or on the Redis server, else in memory."""
    if settings.backend == "redis":
        from agentd.backends.redis_notifications import RedisNotificationStore

        return RedisNotificationStore(settings.redis_url, key_prefix=settings.key_prefix)
    if settings.backend == "sqlite":
        from agentd.backends.sqlite_notifications import SQLiteNotificationStore

        path = Path(settings.path)
        return SQLiteNotificationStore(path if path.is_absolute() or base is None else base / path)
    return InMemoryNotificationStore()


def _agent(table: Any, index: int, registry: ProcessorRegistry, storage: Storage | None = None) -> Agent:
    where = f"agents[{index}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: must be a table")
    _check_keys(table, _AGENT_KEYS, where)
    agent_id = table.get("id")
    if not isinstance(agent_id, str) or not agent_id:
        raise ConfigError(f"{where}.id: required, a non-empty string")
    model = table.get("model", "local/echo")
    try:
        check_model_spec(model)
    except AgentdError as exc:
        raise ConfigError(f"{where}.model: {exc.violations[0].description if exc.violations else exc}") from None
    return Agent(
        id=agent_id,
        name=table.get("name", ""),
        description=table.get("description", ""),
        model=model,
        instructions=_instructions(table.get("instructions", ""), where),
        metadata=dict(table.get("metadata", {})),
        default_options=_options(table["default_options"], f"{where}.default_options")
        if "default_options" in table
        else None,
        max_processor_retries=table.get("max_processor_retries"),
        input_processors=_processors(table.get("input_processors", []), f"{where}.input_processors", registry, "input"),
        output_processors=_processors(
            table.get("output_processors", []), f"{where}.output_processors", registry, "output"
        ),
        error_processors=_processors(table.get("error_processors", []), f"{where}.error_processors", registry, "error"),
        error_processor_defaults=bool(table.get("error_processor_defaults", True)),
        memory=_memory(table["memory"], f"{where}.memory", storage) if "memory" in table else None,
        fallback_models=_fallbacks(table.get("fallback_models", []), f"{where}.fallback_models"),
        delivery_policy=_policy(table["notifications"], f"{where}.notifications") if "notifications" in table else None,
        signal_delivery=_signal_delivery(table.get("signal_delivery", {}), f"{where}.signal_delivery"),
        request_context_schema=table.get("request_context_schema"),
    )


def load(
    path: str | Path | None, env: dict[str, str] | None = None, registry: ProcessorRegistry | None = None
) -> Config:
    """`registry` resolves processor names (default: the built-ins)."""
    env = dict(os.environ) if env is None else env
    registry = registry or default_registry()
    config = Config()
    path = path or env.get("AGENTD_CONFIG") or (DEFAULT_CONFIG if Path(DEFAULT_CONFIG).exists() else None)
    if path:
        config.path = Path(path)
        try:
            data = tomllib.loads(config.path.read_text())
        except FileNotFoundError:
            raise ConfigError(f"config file {config.path} not found") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{config.path}: {exc}") from None
        _check_keys(
            data,
            {"server", "auth", "cache", "storage", "coordination", "threads", "attachments", "pricing", "agents"},
            str(config.path),
        )
        threads = data.get("threads", {})
        _check_keys(threads, set(ThreadSettings.__dataclass_fields__), "threads")
        try:
            config.threads = ThreadSettings(**threads)
        except TypeError as exc:
            raise ConfigError(f"threads: {exc}") from None
        attachments = data.get("attachments", {})
        _check_keys(attachments, set(AttachmentSettings.__dataclass_fields__), "attachments")
        allow = attachments.get("allow_private_networks", False)
        if not isinstance(allow, bool):
            raise ConfigError(f"attachments.allow_private_networks: {allow!r} is not true or false")
        config.attachments = AttachmentSettings(allow)
        server = data.get("server", {})
        _check_keys(server, set(ServerSettings.__dataclass_fields__), "server")
        try:
            config.auth = parse_auth(data.get("auth", {}), config.path.parent)
            tls = parse_tls(server.get("tls"), config.path.parent)
        except AuthConfigError as exc:
            raise ConfigError(str(exc)) from None
        config.server = ServerSettings(
            host=server.get("host", DEFAULT_HOST),
            port=int(server.get("port", DEFAULT_PORT)),
            shutdown_grace_seconds=float(server.get("shutdown_grace_seconds", DEFAULT_GRACE)),
            max_message_bytes=int(server.get("max_message_bytes", DEFAULT_MAX_MESSAGE_BYTES)),
            health_probe_seconds=float(server.get("health_probe_seconds", 1.0)),
            reflection=str(server.get("reflection", "open")),
            default_deadline_seconds=float(server.get("default_deadline_seconds", 300.0)),
            tls=tls,
            metrics_port=_metrics_port(server.get("metrics_port")),
        )
        if "mtls" in config.auth.modes and (tls is None or not tls.require_client_cert):
            # grpc only asks for a client certificate when it requires one: mode mtls would admit nobody.
            raise ConfigError(
                'auth.mode "mtls" needs [server.tls] with client_ca_file and require_client_cert = true'
            )
        if config.server.reflection not in ("open", "authenticated", "off"):
            raise ConfigError(f"server.reflection: {config.server.reflection!r} is not open, authenticated or off")
        if config.server.default_deadline_seconds <= 0:
            raise ConfigError("server.default_deadline_seconds: must be positive")
        if config.server.max_message_bytes < 64 * 1024:
            raise ConfigError(f"server.max_message_bytes: {config.server.max_message_bytes} is under 64 KiB")
        if config.server.health_probe_seconds <= 0:
            raise ConfigError(f"server.health_probe_seconds: {config.server.health_probe_seconds} is not positive")
        cache_table, storage_table = data.get("cache", {}), data.get("storage", {})
        coordination = data.get("coordination", {})
        if isinstance(coordination, str):  # `coordination = "redis"`: the table's backend alone
            coordination = {"backend": coordination}
        config.coordination_settings = _coordination_settings(coordination, storage_table, cache_table)
        config.storage_settings = _storage_settings(storage_table)
        config.storage = build_storage(config.storage_settings, config.path.parent)
        try:
            check_shareable(config.storage, coordinated=config.coordination_settings.backend == "redis")
        except ValueError as exc:
            raise ConfigError(
                f'coordination.backend: {exc} (set storage.backend = "redis", or coordination.backend = "local")'
            ) from None
        if config.coordination_settings.backend == "redis" and not config.coordination_settings.redis_url:
            raise _coordination_url_required()
        config.coordination = build_coordination(config.coordination_settings)
        config.cache = _cache_settings(cache_table)
        config.notification_store = build_notification_store(config.storage_settings, config.path.parent)
        try:
            config.pricing = parse_prices(data.get("pricing", {}))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        config.caches = build_caches(config.cache)
        registry = with_response_cache(registry, config.caches, config.pricing, config.cache.backend)
        ids: set[str] = set()
        for i, table in enumerate(data.get("agents", [])):
            agent = _agent(table, i, registry, config.storage)
            if agent.id in ids:
                raise ConfigError(f"agents[{i}].id: {agent.id!r} is defined twice")
            ids.add(agent.id)
            config.agents.append(agent)
    if not config.caches:
        config.caches = build_caches(config.cache)
    if config.storage is None:
        config.storage = build_storage(config.storage_settings)
    if config.notification_store is None:
        config.notification_store = build_notification_store(config.storage_settings)
    if config.coordination is None:
        config.coordination = build_coordination(config.coordination_settings)
    config.cluster = build_cluster(config.coordination_settings, config.threads)
    for url in (config.cache.redis_url, config.storage_settings.redis_url, config.coordination_settings.redis_url):
        add_secret(urlsplit(url).password if url else None)  # a Redis password never reaches a log line
    try:
        config.thread_settings  # noqa: B018 (checks the values)
    except ValueError as exc:
        raise ConfigError(f"threads: {exc}") from None
    if env.get("AGENTD_HOST"):
        config.server.host = env["AGENTD_HOST"]
    if env.get("AGENTD_PORT"):
        try:
            config.server.port = int(env["AGENTD_PORT"])
        except ValueError:
            raise ConfigError(f"AGENTD_PORT={env['AGENTD_PORT']!r} is not a port number") from None
    return config
