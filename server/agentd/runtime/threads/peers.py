"""What replicas ask each other about the threads and runs one of them holds:
typed requests and answers, carried by Cluster.request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentd.runtime import codec
from agentd.runtime.threads.routing import RouteRequest, Routing

__all__ = ["AbortAnswer", "AbortForward", "PeerAnswer", "PeerRequest", "RouteAnswer", "ToolAnswer", "ToolForward"]


@dataclass(frozen=True)
class RouteAnswer:
    #: None: the replica no longer runs the thread (it is changing hands; look again).
    routing: Routing | None


@dataclass(frozen=True)
class AbortForward:
    resource_id: str
    thread_id: str
    run_id: str | None


@dataclass(frozen=True)
class AbortAnswer:
    #: The aborted run's id, or None when none was aborted.
    run_id: str | None


@dataclass(frozen=True)
class ToolForward:
    run_id: str
    tool_call_id: str
    result: Any
    is_error: bool


@dataclass(frozen=True)
class ToolAnswer:
    answered: bool


#: A forwarded RouteRequest carries only what the holder needs on an active
#: thread (no idle behaviour: when idle it answers RouteAnswer(None)).
PeerRequest = RouteRequest | AbortForward | ToolForward
PeerAnswer = RouteAnswer | AbortAnswer | ToolAnswer

for _type in (RouteRequest, Routing, RouteAnswer, AbortForward, AbortAnswer, ToolForward, ToolAnswer):
    codec.register(_type)
