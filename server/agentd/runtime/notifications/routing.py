"""The callbacks the thread runtime supplies: `Route` sends a signal into a
thread, `ThreadStateFn` tells whether a thread is active or idle. Routing
stays outside notifications, so the service runs and is tested alone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias

from agentd.runtime.notifications.policy import ThreadState
from agentd.runtime.notifications.record import NotificationRecord
from agentd.runtime.signals import Signal

IdleBehavior = Literal["wake", "persist"]
#: What the router did with a signal ("blocked": the thread is held by a suspended run).
RouteAction = Literal["wake", "deliver", "persist", "discard", "blocked"]


@dataclass(frozen=True)
class RouteResult:
    """What the router did (a subclass may carry more, e.g. a woken run's
    output: results hand the object back unchanged)."""

    action: RouteAction
    #: Present for wake and deliver.
    run_id: str | None = None


class Route(Protocol):
    """Routes a signal into the thread (the runtime's send-signal path).
    `idle_behavior` is what to do when the thread is idle (wake a run, or
    persist without waking); an active thread always gets `deliver`. Resolve
    once routing is decided and, for persist, the row is written; raise when
    the signal cannot be routed or a woken run cannot start."""

    def __call__(
        self,
        signal: Signal,
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        idle_behavior: IdleBehavior,
        stream_options: Any,
    ) -> Awaitable[RouteResult]: ...


#: (resource_id, thread_id) -> "active" | "idle".
ThreadStateFn: TypeAlias = Callable[[str, str], Awaitable[ThreadState]]

#: Route actions after which the signal has reached (or started) a run.
DELIVERED_ACTIONS = frozenset({"wake", "deliver"})
#: Route actions the dispatcher and the inbox count as a failed attempt.
REFUSED_ACTIONS = frozenset({"discard", "blocked"})


class Refused(Exception):
    """Routing returned one of REFUSED_ACTIONS."""

    def __init__(self, action: str) -> None:
        super().__init__(f"routing returned {action}")


def describe(exc: BaseException) -> str:
    """A routing failure as stored in last_delivery_error."""
    return str(exc) or type(exc).__name__


async def route_record(
    route: Route, record: NotificationRecord, signal: Signal, *, idle_behavior: IdleBehavior, stream_options: Any
) -> RouteResult:
    """`route(signal)` into the record's thread, for its agent and resource
    (every record routed has both: send requires them, and the dispatcher and
    the inbox pass over a record without them)."""
    assert record.agent_id and record.resource_id
    return await route(
        signal,
        agent_id=record.agent_id,
        resource_id=record.resource_id,
        thread_id=record.thread_id,
        idle_behavior=idle_behavior,
        stream_options=stream_options,
    )


def accepted(routing: RouteResult) -> RouteResult:
    """`routing`, unless the router refused the signal (Refused)."""
    if routing.action in REFUSED_ACTIONS:
        raise Refused(routing.action)
    return routing
