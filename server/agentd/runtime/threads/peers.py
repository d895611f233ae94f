"""What replicas ask each other about the threads and runs one of them holds:
typed requests and answers, carried by Cluster.request. Only replicas use them:
the module loads with the first LeasedOwnership (`agentd.runtime.lazy`), which
registers them with the codec before its cluster carries any."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentd.runtime import codec
from agentd.runtime.threads.routing import RouteRequest, Routing

__all__ = [
    "AbortAnswer",
    "AbortForward",
    "PeerAnswer",
    "PeerRequest",
    "RouteAnswer",
    "ToolAnswer",
    "ToolForward",
    "register_messages",
]


@dataclass(frozen=True)
class RouteAnswer:
    """The holder's answer to a forwarded route request."""

    #: None: the replica no longer runs the thread (it is changing hands; look again).
    routing: Routing | None


@dataclass(frozen=True)
class AbortForward:
    """An abort of a thread's run, forwarded to the replica that holds the thread."""

    resource_id: str
    thread_id: str
    run_id: str | None
    #: From a deletion: a run past its result has its on_finish work cut short (RunHandle.stop).
    stop: bool = False


@dataclass(frozen=True)
class AbortAnswer:
    """The holder's answer to a forwarded abort."""

    #: The aborted run's id, or None when none was aborted.
    run_id: str | None


@dataclass(frozen=True)
class ToolForward:
    """A client tool's result, forwarded to the replica whose run waits for it."""

    run_id: str
    tool_call_id: str
    result: Any
    is_error: bool


@dataclass(frozen=True)
class ToolAnswer:
    """Whether a run was waiting for the forwarded tool result."""

    answered: bool


#: A forwarded RouteRequest carries only what the holder needs on an active
#: thread (no idle behaviour: when idle it answers RouteAnswer(None)).
PeerRequest = RouteRequest | AbortForward | ToolForward
PeerAnswer = RouteAnswer | AbortAnswer | ToolAnswer


def register_messages() -> None:
    """Lets the codec carry the requests and answers (again: a no-op)."""
    for message in (RouteRequest, Routing, RouteAnswer, AbortForward, AbortAnswer, ToolForward, ToolAnswer):
        codec.register(message)


register_messages()
