"""agentd.toml: settings (agentd.settings: the schema, and the AGENTD_*
variables) and agents, and the backends they describe. Precedence: CLI flag >
AGENTD_* environment variable > file > built-in default."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentd.auth_config import AuthConfigError, AuthSettings, auth_settings, tls_settings
from agentd.runtime.agent import Agent
from agentd.runtime.cache import InMemoryServerCache, ServerCache
from agentd.runtime.cluster import Cluster
from agentd.runtime.coordination import Coordination, LocalCoordination
from agentd.runtime.editor import EditorPolicy, editor_policy
from agentd.runtime.errors import AgentdError
from agentd.runtime.host import App, check_shareable
from agentd.runtime.lazy import lazy
from agentd.runtime.mcp_tools import McpServers
from agentd.runtime.messages import Message
from agentd.runtime.models.router import check_model_spec
from agentd.runtime.notifications.store import InMemoryNotificationStore, NotificationStore
from agentd.runtime.options import (
    ExecutionOptions,
    MapStep,
    ModelSettings,
    ParallelStep,
    ProcessorSpec,
    ProcessorWorkflowSpec,
)
from agentd.runtime.overrides import InMemoryOverrideStore, OverrideStore
from agentd.runtime.processors.catalogue import default_registry, with_response_cache
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.redact import add_secret
from agentd.runtime.scoring.service import ScoringSettings
from agentd.runtime.scoring.store import InMemoryScoreStore, ScoreStore
from agentd.runtime.signals import ActiveDelivery, signal_delivery_policy
from agentd.runtime.storage import InMemoryStorage, Storage
from agentd.runtime.threads import ThreadSettings as RuntimeThreadSettings
from agentd.runtime.tool_payloads import ToolPayloadTransformPolicy, policy_from_options
from agentd.runtime.workflows.limits import WorkflowLimits
from agentd.scoring_config import ScoringConfigError, build_score_store, parse_scorers
from agentd.settings import (
    DEFAULT_GRACE,
    DEFAULT_HOST,
    DEFAULT_PORT,
    AgentdSettings,
    AttachmentSettings,
    CacheSettings,
    ConfigError,
    CoordinationSettings,
    RemoteProcessorSettings,
    ServerSettings,
    StorageSettings,
    ThreadSettings,
    read_settings,
)
from agentd.workflow_config import Linker, WorkflowConfigError

if TYPE_CHECKING:
    from agentd.backends import sqlite_overrides
    from agentd.runtime import memory, pricing
    from agentd.runtime.mcp_tools import spec as mcp_spec
    from agentd.runtime.memory import Memory
    from agentd.runtime.notifications import policy as notification_policy
    from agentd.runtime.notifications.policy import DeliveryPolicy
    from agentd.runtime.pricing import Price
    from agentd.runtime.workflows import definition as workflow_definition
    from agentd.runtime.workflows.definition import Workflow
else:
    workflow_definition = lazy("agentd.runtime.workflows.definition")  # `[[workflows]]` (or the app's) only
    memory = lazy("agentd.runtime.memory")  # an agent's `memory` table only
    pricing = lazy("agentd.runtime.pricing")  # a `[pricing]` table only
    notification_policy = lazy("agentd.runtime.notifications.policy")  # an agent's `notifications` table only
    sqlite_overrides = lazy("agentd.backends.sqlite_overrides")  # a SQLite [storage] only
    mcp_spec = lazy("agentd.runtime.mcp_tools.spec")  # `[[mcp_servers]]` or an agent's MCP tools only

__all__ = [
    "DEFAULT_CONFIG",
    "DEFAULT_GRACE",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "AttachmentSettings",
    "CacheSettings",
    "Config",
    "ConfigError",
    "CoordinationSettings",
    "ServerSettings",
    "StorageSettings",
    "ThreadSettings",
    "build_caches",
    "build_cluster",
    "build_coordination",
    "build_notification_store",
    "build_storage",
    "load",
]

#: Read from the working directory when neither --config nor AGENTD_CONFIG names a file.
DEFAULT_CONFIG = "agentd.toml"


@dataclass
class Config:
    server: ServerSettings = field(default_factory=ServerSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    storage_settings: StorageSettings = field(default_factory=StorageSettings)
    coordination_settings: CoordinationSettings = field(default_factory=CoordinationSettings)
    threads: ThreadSettings = field(default_factory=ThreadSettings)
    attachments: AttachmentSettings = field(default_factory=AttachmentSettings)
    #: `[scoring]`: the live scorers' bounds and the sampling seed.
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    #: Where scores are kept, built beside the storage.
    scores: ScoreStore | None = None
    remote_processors: RemoteProcessorSettings = field(default_factory=RemoteProcessorSettings)
    #: Who may call, and each caller's limits.
    auth: AuthSettings = field(default_factory=AuthSettings)
    #: Threads and messages, built from `storage_settings`.
    storage: Storage | None = None
    notification_store: NotificationStore | None = None
    #: Editor overrides, beside the threads.
    override_store: OverrideStore | None = None
    #: Thread leases, built from `coordination_settings`.
    coordination: Coordination | None = None
    #: Shared chunk logs and replica requests (redis coordination only).
    cluster: Cluster | None = None
    agents: list[Agent] = field(default_factory=list)
    #: `[[workflows]]`, linked to the tools, agents and workflows they name.
    workflows: list[Workflow] = field(default_factory=list)
    workflow_limits: WorkflowLimits = field(default_factory=WorkflowLimits)
    #: The server caches by backend, built from `cache`.
    caches: dict[str, ServerCache] = field(default_factory=dict)
    #: `[pricing."provider/model"] input = ..., output = ...`: USD per million tokens.
    pricing: dict[str, Price] = field(default_factory=dict)
    #: `[[mcp_servers]]`: connected when the host opens, shared by every agent's runs.
    mcp: McpServers = field(default_factory=McpServers)
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
    def score_store(self) -> ScoreStore:
        if self.scores is None:
            self.scores = InMemoryScoreStore()
        return self.scores

    @property
    def scoring_settings(self) -> ScoringSettings:
        return self.scoring

    @property
    def stream_linger(self) -> float:
        return self.server.stream_linger_ms / 1000

    @property
    def on_finish_timeout(self) -> float:
        return self.server.on_finish_timeout_seconds

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
            max_background_jobs=self.threads.max_background_jobs,
        )


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
    "tool_transform",
    "scorers",
    "workflows",
    "tools",
    "editor",
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
        return memory.Memory(storage, last_messages=int(table.get("last_messages", 10)))
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
        return notification_policy.DeliveryPolicy.from_config(table)
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


def build_override_store(settings: StorageSettings, base: Path | None = None) -> OverrideStore:
    """Editor overrides beside the threads: in the SQLite file or on the Redis server, else in memory."""
    if settings.backend == "redis":
        from agentd.backends.redis_overrides import RedisOverrideStore

        return RedisOverrideStore(settings.redis_url, key_prefix=settings.key_prefix)
    if settings.backend == "sqlite":
        path = Path(settings.path)
        return sqlite_overrides.SQLiteOverrideStore(path if path.is_absolute() or base is None else base / path)
    return InMemoryOverrideStore()


def _editor(value: Any, where: str) -> EditorPolicy:
    """`editor = false` or `editor = { instructions = true, tools = { description = true } }`."""
    try:
        return editor_policy(value, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _scorers(entries: Any, where: str) -> Any:
    try:
        return parse_scorers(entries, where)
    except ScoringConfigError as exc:
        raise ConfigError(str(exc)) from None


def _mcp_servers(entries: list[Any], base: Path | None) -> McpServers:
    specs = []
    for i, table in enumerate(entries):
        try:
            specs.append(mcp_spec.parse_server(table, f"mcp_servers[{i}]", base))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if any(s.id == specs[-1].id for s in specs[:-1]):
            raise ConfigError(f"mcp_servers[{i}].id: {specs[-1].id!r} is defined twice")
    return McpServers(specs)


def _agent(
    table: Any, index: int, registry: ProcessorRegistry, storage: Storage | None = None, mcp: McpServers | None = None
) -> Agent:
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
    mcp = mcp or McpServers()
    try:
        refs = mcp_spec.parse_tool_refs(table["tools"], f"{where}.tools", mcp.ids) if "tools" in table else ()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
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
        tool_transform=_tool_transform(table["tool_transform"], f"{where}.tool_transform")
        if "tool_transform" in table
        else None,
        scorers=_scorers(table.get("scorers", []), f"{where}.scorers"),
        tool_sources=[mcp.select(refs)] if refs else [],
        editor=_editor(table.get("editor"), f"{where}.editor"),
    )


def _link_workflows(config: Config, settings: AgentdSettings, app: App) -> None:
    limits = settings.workflow_limits
    config.workflow_limits = WorkflowLimits(max_depth=limits.max_depth, max_parallel=limits.max_parallel)
    try:
        linker = Linker(config.agents, app)
        config.workflows = linker.workflows_of(settings.workflows)
        for i, table in enumerate(settings.agents):
            if "workflows" in table:
                config.agents[i].workflows = linker.agent_workflows(table["workflows"], f"agents[{i}].workflows")
        linker.link_app_agents()
        # Declared workflows are checked even when no agent runs them (agents' are, again, by the host).
        if config.workflows or app.workflows:
            workflow_definition.check_workflows([*config.workflows, *app.workflows], limits=config.workflow_limits)
    except (WorkflowConfigError, ValueError) as exc:
        raise ConfigError(str(exc)) from None


def _read(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} not found") from None
    except tomllib.TOMLDecodeError as exc:  # its message has the line and column
        raise ConfigError(f"{path}: {exc}") from None


def _redis_secrets(data: Mapping[str, Any], environ: Mapping[str, str]) -> None:
    """A Redis password never reaches a log line, nor an error about the very URL it is in."""
    urls = [t.get("redis_url") for t in data.values() if isinstance(t, Mapping)]
    urls += [v for k, v in environ.items() if k.lower().endswith("redis_url")]
    for url in urls:
        if isinstance(url, str):
            try:
                add_secret(urlsplit(url).password)
            except ValueError:  # not a URL: it is refused where it is used
                pass


def _tool_transform(table: Any, where: str) -> ToolPayloadTransformPolicy:
    """`tool_transform = { args = {...}, result = {...}, tools = { name = {...} } }`."""
    try:
        return policy_from_options(table, where)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def load(
    path: str | Path | None,
    env: Mapping[str, str] | None = None,
    registry: ProcessorRegistry | None = None,
    app: App | None = None,
) -> Config:
    """The file at `path` (else $AGENTD_CONFIG, else ./agentd.toml if there is
    one) under the AGENTD_* variables of `env` (default: the process's);
    `registry` resolves processor names (default: the built-ins); `app` (the
    `--app` module's) offers the tools, agents and workflows `[[workflows]]`
    may name."""
    env = os.environ if env is None else env
    registry = registry or default_registry()
    path = path or env.get("AGENTD_CONFIG") or (DEFAULT_CONFIG if Path(DEFAULT_CONFIG).exists() else None)
    file = Path(path) if path else None
    base = file.parent if file else None
    data = _read(file) if file else {}
    _redis_secrets(data, env)
    settings = read_settings(data, env, where=str(file or "the settings"))
    # Built from the validated tables (the defaults would each build a table's own validator).
    config = Config(
        server=settings.server,
        cache=settings.cache,
        storage_settings=settings.storage,
        coordination_settings=settings.coordination,
        threads=settings.threads,
        attachments=settings.attachments,
        remote_processors=settings.remote_processors,
        path=file,
    )
    try:
        config.auth = auth_settings(settings.auth, base)
        config.server.tls = tls_settings(settings.server.tls, base)
    except AuthConfigError as exc:
        raise ConfigError(str(exc)) from None
    tls = config.server.tls
    if "mtls" in config.auth.modes and (tls is None or not tls.require_client_cert):
        # grpc only asks for a client certificate when it requires one: mode mtls would admit nobody.
        raise ConfigError('auth.mode "mtls" needs [server.tls] with client_ca_file and require_client_cert = true')
    try:
        config.thread_settings  # noqa: B018 (checks the values)
    except ValueError as exc:
        raise ConfigError(f"threads: {exc}") from None
    try:
        config.pricing = pricing.parse_prices(settings.pricing) if settings.pricing else {}
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    config.storage = build_storage(config.storage_settings, base)
    try:
        check_shareable(config.storage, coordinated=config.coordination_settings.backend == "redis")
    except ValueError as exc:
        raise ConfigError(
            f'coordination.backend: {exc} (set storage.backend = "redis", or coordination.backend = "local")'
        ) from None
    config.coordination = build_coordination(config.coordination_settings)
    config.notification_store = build_notification_store(config.storage_settings, base)
    config.scores = build_score_store(config.storage_settings, base)
    config.override_store = build_override_store(config.storage_settings, base)
    scoring = settings.scoring
    config.scoring = ScoringSettings(scoring.max_pending, scoring.timeout_seconds, scoring.seed)
    config.caches = build_caches(config.cache)
    config.cluster = build_cluster(config.coordination_settings, config.threads)
    registry = with_response_cache(registry, config.caches, config.pricing, config.cache.backend)
    config.mcp = _mcp_servers(settings.mcp_servers, base)
    ids: set[str] = set()
    for i, table in enumerate(settings.agents):
        agent = _agent(table, i, registry, config.storage, config.mcp)
        if agent.id in ids:
            raise ConfigError(f"agents[{i}].id: {agent.id!r} is defined twice")
        ids.add(agent.id)
        config.agents.append(agent)
    _link_workflows(config, settings, app or App())
    return config
