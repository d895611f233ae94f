"""What a signal routing request is, and what it answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentd.runtime.errors import FailedPrecondition, NotFound
from agentd.runtime.identity import DEFAULT_TENANT, tenant_of
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import AttributesInput, Signal

__all__ = ["ActiveBehavior", "Delivery", "IdleBehavior", "RouteRequest", "Routing", "run_not_active", "thread_busy"]

ActiveBehavior = Literal["deliver", "persist", "discard"]
IdleBehavior = Literal["wake", "persist", "discard"]


@dataclass(frozen=True, kw_only=True)
class Delivery:
    """Where a signal goes, and what happens to it on an active or an idle
    thread: what every way of sending one (RouteRequest, a state signal) says."""

    agent_id: str
    resource_id: str
    thread_id: str
    #: What to do when the thread has an active run (None: the agent's
    #: `signal_delivery` for the signal's category, else deliver).
    if_active: ActiveBehavior | None = None
    #: What to do when the thread is idle.
    if_idle: IdleBehavior = "wake"
    #: Attributes merged into the signal on each path (scalar values only).
    active_attributes: AttributesInput = None
    idle_attributes: AttributesInput = None
    #: Options of the run a wake starts (or of a queued run).
    stream_options: ExecutionOptions | None = None
    #: Only into this active run (NOT_FOUND when it is not the thread's active run).
    run_id: str | None = None
    #: The tenant the request was authorized for: the replica that routes it
    #: checks that the (scoped) ids are that tenant's, whichever replica it came through.
    tenant: str = DEFAULT_TENANT

    def check_tenant(self) -> None:
        """NOT_FOUND unless the thread and resource are the request's tenant's."""
        if tenant_of(self.thread_id) != self.tenant or tenant_of(self.resource_id) != self.tenant:
            raise NotFound("no such thread for this caller", "THREAD_NOT_FOUND")


@dataclass(frozen=True, kw_only=True)
class RouteRequest(Delivery):
    """One signal to route into a thread: what SendMessage, QueueMessage,
    SendSignal, Connect frames and notification delivery all come down to."""

    signal: Signal
    #: QueueMessage: always a run of its own, after the active one.
    queue: bool = False

    @property
    def idempotency_key(self) -> tuple[str, ...]:
        """What makes two routing requests the same request (a retry)."""
        return (
            self.agent_id,
            self.resource_id,
            self.thread_id,
            self.run_id or "",
            self.signal.id,
            "q" if self.queue else "s",
        )


@dataclass(frozen=True)
class Routing:
    """The routing decision: wake/deliver carry the run id."""

    action: Literal["wake", "deliver", "persist", "discard", "skipped_unchanged"]
    run_id: str | None = None
    signal: Signal | None = None


def run_not_active(run_id: str, thread_id: str) -> NotFound:
    return NotFound(f"run {run_id!r} is not active on thread {thread_id!r}", "RUN_NOT_FOUND", {"run_id": run_id})


def thread_busy(thread_id: str, run_id: str) -> FailedPrecondition:
    return FailedPrecondition(
        f"thread {thread_id!r} has an active run; queue the message or subscribe to the thread",
        "THREAD_BUSY",
        {"thread_id": thread_id, "run_id": run_id},
    )
