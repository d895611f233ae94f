"""Live threads: the thread runtime, composed of where its chunks are logged
(ThreadLog) and who may drive each thread (ThreadOwnership). The replicas'
(LeasedOwnership, SharedThreadLog) are read from their modules on first use:
a single replica never loads them."""

from typing import TYPE_CHECKING

from agentd.runtime.lazy import lazy_exports
from agentd.runtime.threads.log import LocalThreadLog, LogJoin, ThreadLog
from agentd.runtime.threads.ownership import Holder, LocalOwnership, ThreadHost, ThreadOwnership
from agentd.runtime.threads.routing import (
    ActiveBehavior,
    Delivery,
    IdleBehavior,
    RouteRequest,
    Routing,
    run_not_active,
    thread_busy,
)
from agentd.runtime.threads.runtime import Snapshot, ThreadRuntime
from agentd.runtime.threads.settings import DEFAULT_LOG_RETENTION, ThreadSettings
from agentd.runtime.threads.subscriber import DEFAULT_SUBSCRIBER_BUFFER, Subscriber, follow

if TYPE_CHECKING:
    from agentd.runtime.threads.leased import LeasedOwnership
    from agentd.runtime.threads.shared_log import SharedThreadLog

__all__ = [
    "DEFAULT_LOG_RETENTION",
    "DEFAULT_SUBSCRIBER_BUFFER",
    "ActiveBehavior",
    "Delivery",
    "Holder",
    "IdleBehavior",
    "LeasedOwnership",
    "LocalOwnership",
    "LocalThreadLog",
    "LogJoin",
    "RouteRequest",
    "Routing",
    "SharedThreadLog",
    "Snapshot",
    "Subscriber",
    "ThreadHost",
    "ThreadLog",
    "ThreadOwnership",
    "ThreadRuntime",
    "ThreadSettings",
    "follow",
    "run_not_active",
    "thread_busy",
]

__getattr__ = lazy_exports(
    __name__,
    {"LeasedOwnership": "agentd.runtime.threads.leased", "SharedThreadLog": "agentd.runtime.threads.shared_log"},
)
