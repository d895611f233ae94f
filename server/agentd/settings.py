"""agentd's settings: the tables of agentd.toml, each key also settable from
the environment. The variable for a key is AGENTD_ and its path, tables
joined by a double underscore, in any case: `[storage] backend` is
AGENTD_STORAGE__BACKEND, `[auth.limits] burst` AGENTD_AUTH__LIMITS__BURST.
A list or a table of free keys (`[pricing]`) is given as JSON.
AGENTD_HOST and AGENTD_PORT are short for AGENTD_SERVER__HOST and
AGENTD_SERVER__PORT. A variable wins over the file; `[[agents]]`,
`[[workflows]]` and `[[mcp_servers]]` are the file's alone."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from agentd.auth_config import AuthTable, TLSTable
from agentd.grpc.server import DEFAULT_MAX_MESSAGE_BYTES
from agentd.runtime.buffer import DEFAULT_LINGER
from agentd.runtime.cache import DEFAULT_MAX_BYTES, DEFAULT_MAX_SIZE, DEFAULT_TTL_SECONDS
from agentd.runtime.coordination import DEFAULT_LEASE_TTL_MS
from agentd.runtime.lazy import lazy
from agentd.runtime.loop.state import DEFAULT_ON_FINISH_TIMEOUT
from agentd.runtime.workflows.limits import DEFAULT_MAX_DEPTH, DEFAULT_MAX_PARALLEL
from agentd.schema import (
    Flag,
    Loc,
    NonNegative,
    Number,
    Positive,
    Table,
    Whole,
    describe,
    empty_dict,
    empty_list,
    from_env,
    merge,
    section,
)

if TYPE_CHECKING:
    from agentd import settings_env
else:
    settings_env = lazy("agentd.settings_env")  # only when a variable names a table

__all__ = [
    "AgentdSettings",
    "AttachmentSettings",
    "CacheSettings",
    "ConfigError",
    "CoordinationSettings",
    "ScoringTable",
    "ServerSettings",
    "StorageSettings",
    "ThreadSettings",
    "read_settings",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 50051
DEFAULT_GRACE = 10.0
PREFIX = "AGENTD_"
NESTING = "__"
#: Short names kept from before every key had a variable.
ALIASES = {("server", "host"): "AGENTD_HOST", ("server", "port"): "AGENTD_PORT"}


class ConfigError(ValueError):
    """agentd.toml (or an AGENTD_* variable) is invalid; the message names the key."""


def _at_least_64_kib(value: int) -> int:
    if value < 64 * 1024:
        raise ValueError(f"server.max_message_bytes: {value} is under 64 KiB")
    return value


class ServerSettings(Table):
    host: str = DEFAULT_HOST
    port: Annotated[Whole, Field(ge=0, le=65535)] = DEFAULT_PORT
    shutdown_grace_seconds: NonNegative = DEFAULT_GRACE
    #: The largest message the server sends or receives; a unary reply over it is RESOURCE_EXHAUSTED.
    max_message_bytes: Annotated[Whole, AfterValidator(_at_least_64_kib)] = DEFAULT_MAX_MESSAGE_BYTES
    #: How often storage is probed for the health service.
    health_probe_seconds: Positive = 1.0
    #: Reflection for grpcurl: "open", "authenticated" (a caller who could call anything) or "off".
    reflection: Literal["open", "authenticated", "off"] = "open"
    #: The deadline a unary call gets when it carries none.
    default_deadline_seconds: Positive = 300.0
    #: How long a run's on_finish callbacks may take in all before the rest are
    #: skipped (a thread's run holds its thread until they end).
    on_finish_timeout_seconds: Positive = DEFAULT_ON_FINISH_TIMEOUT
    #: TLS (and mutual TLS) for the listening port; None: plaintext.
    tls: TLSTable | None = None
    #: How long a stream (Stream, Subscribe) waits for more of a fast run's
    #: chunks before it sends a small batch, in milliseconds (0: send at once).
    stream_linger_ms: Annotated[Number, Field(ge=0, le=1000)] = DEFAULT_LINGER * 1000
    #: The Prometheus scrape endpoint's port, on `host` (0: any free port); None: no endpoint.
    metrics_port: Annotated[Whole, Field(ge=0, le=65535)] | None = None
    #: Every thread but the event loop's runs SCHED_BATCH (Linux): see agentd.helper_threads.
    batch_helper_threads: bool = True

    @field_validator("metrics_port", mode="wrap")
    @classmethod
    def _a_port(cls, value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise ValueError(
                f"{value!r} is not a port number (1-65535, or 0 for any free port); leave it out to serve no metrics"
            ) from None


class CacheSettings(Table):
    #: The backend CacheService operates on: "memory" or "redis".
    backend: Literal["memory", "redis"] = "memory"
    max_size: Annotated[Whole, Field(ge=1)] = DEFAULT_MAX_SIZE
    #: The memory cache's bound in bytes (an estimate of its keys and values).
    max_bytes: Annotated[Whole, Field(ge=1)] = DEFAULT_MAX_BYTES
    ttl_seconds: Positive = DEFAULT_TTL_SECONDS
    #: Set to have a Redis cache (required when backend = "redis").
    redis_url: str | None = None
    key_prefix: str = "agentd:cache:"
    socket_timeout: Positive = 2.0
    max_connections: Annotated[Whole, Field(ge=1)] = 50


class StorageSettings(Table):
    #: "sqlite" (embedded default), "memory" (lost on exit) or "redis".
    backend: Literal["sqlite", "memory", "redis"] = "sqlite"
    path: str = "agentd-data/agentd.db"
    redis_url: str | None = None
    key_prefix: str = "agentd:store:"


class CoordinationSettings(Table):
    #: "local" (one replica, the default) or "redis" (several replicas on one Redis:
    #: thread leases, shared chunk logs, requests between replicas; storage and
    #: cache then default to the same Redis, and storage must be on Redis).
    backend: Literal["local", "redis"] = "local"
    #: Defaults to storage.redis_url (or cache.redis_url).
    redis_url: str | None = None
    key_prefix: str = "agentd:lease:"
    lease_ttl_ms: Annotated[Whole, Field(gt=0)] = DEFAULT_LEASE_TTL_MS
    #: Threads' chunk logs, run markers and request channels.
    cluster_key_prefix: str = "agentd:cluster:"
    #: A thread's chunk log is dropped this long after its last chunk
    #: (`threads.log_retention` bounds its length).
    log_ttl_seconds: Positive = 86_400.0


class ThreadSettings(Table):
    #: How long a run waits for a client tool's answer (Connect) before the model sees a tool error.
    client_tool_timeout_seconds: Number = 120.0
    #: Chunks a subscriber may lag before it gets a fell-behind marker.
    subscriber_buffer: Whole = 1024
    #: Chunks kept per thread for resuming subscribers.
    log_retention: Whole = 10_000
    #: One replica: the threads whose chunk logs are kept, the bytes they may hold,
    #: and how long a log nobody watches outlives its last chunk.
    log_max_threads: Whole = 10_000
    log_max_bytes: Whole = 64 * 1024 * 1024
    log_idle_ttl_seconds: Number = 600.0
    #: Background tool calls running at once in this process.
    max_background_jobs: Whole = 16
    #: How often notifications that fell due are delivered (0: never on a timer).
    notification_dispatch_interval_seconds: NonNegative = 5.0


class AttachmentSettings(Table):
    #: Let attachment downloads reach loopback, private and link-local addresses
    #: (off: a caller's URL cannot make agentd fetch from inside its network).
    allow_private_networks: Flag = False


class ScoringTable(Table):
    #: Runs being scored at once; a run that ends while that many are is not scored.
    max_pending: Annotated[Whole, Field(ge=1)] = 256
    #: Seconds each scorer may take.
    timeout_seconds: Positive = 60.0
    #: Seeds the sampling generator (tests); unset: the system's entropy.
    seed: Whole | None = None


class WorkflowLimitsSettings(Table):
    #: How deep workflows may nest (a workflow in a workflow, or run by an agent step's agent).
    max_depth: Annotated[Whole, Field(ge=1)] = DEFAULT_MAX_DEPTH
    #: The most steps one parallel or branch step may hold.
    max_parallel: Annotated[Whole, Field(ge=1)] = DEFAULT_MAX_PARALLEL


#: Lists of tables only the file gives (each is checked where it is built).
FILE_ONLY = ("agents", "workflows", "mcp_servers")


class RemoteProcessorSettings(Table):
    #: Targets a call's own `remote` processor entry may name (shell-style
    #: patterns, e.g. "127.0.0.1:*"): none by default, so a caller cannot make
    #: agentd send a run to an address of its choosing. agentd.toml's own
    #: entries may name any target.
    allowed_targets: list[str] = Field(default_factory=empty_list)


class AgentdSettings(BaseModel):
    """Every table of agentd.toml; `agents` and `pricing` are checked where they are built.
    (A model, not pydantic-settings' BaseSettings: it is validated from the
    file's tables and the variables `settings_env` read, never from the
    process's environment at construction.)"""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    server: ServerSettings = section()
    auth: AuthTable = section()
    cache: CacheSettings = section()
    storage: StorageSettings = section()
    coordination: CoordinationSettings = section()
    threads: ThreadSettings = section()
    attachments: AttachmentSettings = section()
    #: The live scorers' bounds (the scorers themselves are each agent's `scorers`).
    scoring: ScoringTable = section()
    remote_processors: RemoteProcessorSettings = section()
    #: `[pricing."provider/model"] input = ..., output = ...`: USD per million tokens.
    pricing: dict[str, Any] = Field(default_factory=empty_dict)
    #: `[[mcp_servers]]`: checked where they are built (agentd.runtime.mcp_tools.spec).
    mcp_servers: list[Any] = Field(default_factory=empty_list)
    agents: list[Any] = Field(default_factory=empty_list)
    #: `[[workflows]]`, linked to what they name in workflow_config.py.
    workflows: list[Any] = Field(default_factory=empty_list)
    workflow_limits: WorkflowLimitsSettings = section()

    @field_validator("coordination", mode="before")
    @classmethod
    def _bare_backend(cls, value: Any) -> Any:
        """`coordination = "redis"`: the table's backend alone."""
        return {"backend": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one_redis(self) -> AgentdSettings:
        """With redis coordination, storage and cache default to the same
        Redis (unless their backend is chosen), and every Redis needs a URL."""
        coordination, storage, cache = self.coordination, self.storage, self.cache
        if coordination.backend == "redis":
            coordination.redis_url = coordination.redis_url or storage.redis_url or cache.redis_url
            for table in (storage, cache):
                if "backend" not in table.model_fields_set:
                    table.backend = "redis"
                    table.redis_url = table.redis_url or coordination.redis_url
            if storage.backend != "redis":
                return self  # refused where the storage is built, for what it is: not shared by replicas
            if not coordination.redis_url:
                raise ValueError(_COORDINATION_URL)
        if storage.backend == "redis" and not storage.redis_url:
            raise ValueError("storage.redis_url: required when storage.backend is redis")
        if cache.backend == "redis" and not cache.redis_url:
            raise ValueError("cache.redis_url: required when cache.backend is redis")
        return self


_COORDINATION_URL = "coordination.redis_url: required when coordination.backend is redis"


def _variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The AGENTD_* variables, by lower-cased name (they are read in any case);
    an empty value is unset. Only those: pydantic-settings looks for each
    table's variables through every variable it is given, and a pod's service
    links (hundreds of `*_SERVICE_HOST`, `*_PORT_*`) made reading the settings
    five times slower (1,000 of them: 13 ms to 2.6 ms)."""
    prefix = PREFIX.lower()
    lowered = ((name.lower(), value) for name, value in environ.items() if value != "")
    variables = {name: value for name, value in lowered if name.startswith(prefix)}
    for (table, key), short in ALIASES.items():
        if short.lower() in variables:
            variables.setdefault(f"{PREFIX}{table}{NESTING}{key}".lower(), variables[short.lower()])
    return variables


def _check_tables(variables: Mapping[str, str], environ: Mapping[str, str]) -> None:
    """A variable for a table agentd does not have is a typo, not someone else's variable."""
    prefix = PREFIX.lower()
    for name in variables:
        if name.startswith(prefix) and NESTING in name[len(prefix) :]:
            table = name[len(prefix) :].split(NESTING, 1)[0]
            if table not in AgentdSettings.model_fields or table in FILE_ONLY:
                tables = ", ".join(t for t in AgentdSettings.model_fields if t not in FILE_ONLY)
                raise ConfigError(f"{_spelled(name, environ)}: agentd has no [{table}] table (tables: {tables})")


def _spelled(name: str, environ: Mapping[str, str]) -> str:
    """The variable as the environment spells it."""
    return next((n for n in environ if n.lower() == name.lower()), name.upper())


def _source(from_env: Mapping[str, Any], environ: Mapping[str, str]) -> Callable[[Loc], str | None]:
    """The variable that gave the value at a key's path, if one did."""

    def source(loc: Loc) -> str | None:
        node: Any = from_env
        path: list[str] = []
        for part in loc:
            if not isinstance(node, Mapping) or not isinstance(part, str) or part not in node:
                break
            node = node[part]
            path.append(part)
        if not path or (isinstance(node, Mapping) and len(path) < len(loc)):
            return None  # the file's value (or a table the variables only added to)
        name = PREFIX + NESTING.join(path)
        alias = ALIASES.get((path[0], path[1])) if len(path) == 2 else None
        if alias and not any(n.lower() == name.lower() for n in environ):
            return _spelled(alias, environ)
        return _spelled(name, environ)

    return source


def _from_variables(variables: Mapping[str, str]) -> dict[str, Any]:
    """The tables the variables give, marked as the environment's (FromEnv);
    the file-only lists' variables are read (a bad one is refused) and dropped.
    Without a variable naming a table there is nothing to read."""
    prefix = PREFIX.lower()
    named = [prefix + name for name in AgentdSettings.model_fields]
    if not any(v == n or v.startswith(n + NESTING) for v in variables for n in named):
        return {}
    values = settings_env.read_variables(AgentdSettings, variables, prefix=PREFIX, nesting=NESTING)
    for name in FILE_ONLY:
        values.pop(name, None)
    return dict(from_env(values))


def read_settings(data: Mapping[str, Any], environ: Mapping[str, str], *, where: str) -> AgentdSettings:
    """The file's tables (`data`, named `where` in messages) under the
    environment's AGENTD_* variables; ConfigError names the key (and the variable)."""
    variables = _variables(environ)
    _check_tables(variables, environ)
    try:
        from_env = _from_variables(variables)
    except settings_env.NotJSON as exc:  # a value that had to be JSON (a table's, a list's) was not
        table = PREFIX.lower() + exc.table
        names = [_spelled(n, environ) for n in variables if n == table or n.startswith(table + NESTING)]
        raise ConfigError(
            f"{', '.join(names) or exc}: not JSON; set a table's keys one by one "
            "(AGENTD_STORAGE__BACKEND=redis), a list or a table of free keys as JSON"
        ) from None
    try:
        return AgentdSettings.model_validate(merge(data, from_env))
    except ValidationError as exc:
        raise ConfigError(describe(exc, AgentdSettings, where=where, source=_source(from_env, environ))) from None
