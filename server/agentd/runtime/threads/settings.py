"""The thread runtime's settings, fixed when it is built."""

from __future__ import annotations

from dataclasses import dataclass

from agentd.runtime.coordination import DEFAULT_LEASE_TTL_MS
from agentd.runtime.threads.subscriber import DEFAULT_SUBSCRIBER_BUFFER

__all__ = ["DEFAULT_LOG_RETENTION", "ThreadSettings"]

#: Chunks kept per thread for resuming subscribers.
DEFAULT_LOG_RETENTION = 10_000


@dataclass(frozen=True, kw_only=True)
class ThreadSettings:
    #: Chunks kept per thread for resuming subscribers.
    log_retention: int = DEFAULT_LOG_RETENTION
    #: One process: the threads whose chunk logs are kept (least recently used go first).
    log_max_threads: int = 10_000
    #: One process: the bytes all kept chunk logs may hold (an estimate of the chunks' size).
    log_max_bytes: int = 64 * 1024 * 1024
    #: One process: a log nobody watches is dropped this long after its last chunk (seconds).
    log_idle_ttl: float = 600.0
    #: Chunks a subscriber may lag before it is told it fell behind.
    subscriber_buffer: int = DEFAULT_SUBSCRIBER_BUFFER
    #: How long a run waits for a client tool's answer before the model sees a tool error.
    client_tool_timeout: float = 120.0
    #: Replicas: how long a thread's lease lives without a renewal.
    lease_ttl_ms: int = DEFAULT_LEASE_TTL_MS
    #: Replicas: how often to look for threads a dead replica left (None: half a lease).
    sweep_interval: float | None = None
    #: Replicas: how long a forwarded request waits for the other replica's answer.
    request_timeout: float = 10.0
    #: Background tool calls running at once in one process (a call beyond it answers an error).
    max_background_jobs: int = 16

    def __post_init__(self) -> None:
        for name in (
            "log_retention",
            "log_max_threads",
            "log_max_bytes",
            "subscriber_buffer",
            "lease_ttl_ms",
            "max_background_jobs",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{name} must be a positive whole number, not {value!r}")
        for name in ("client_tool_timeout", "request_timeout", "log_idle_ttl"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)!r}")

    @property
    def lease_ttl(self) -> float:
        """The lease's lifetime in seconds."""
        return self.lease_ttl_ms / 1000

    @property
    def sweep_every(self) -> float:
        return self.sweep_interval if self.sweep_interval is not None else max(0.05, self.lease_ttl / 2)
