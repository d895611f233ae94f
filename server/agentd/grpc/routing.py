"""Where a signal goes and how, as SignalService and Connect frames say it:
validated into the runtime's RouteRequest (or StateSignalRequest), and the
routing decision back to protobuf. Shared by both servicers."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from agentd.grpc.authz import caller, check_id_chars
from agentd.grpc.options import host_options
from agentd.grpc.parts import content_part_from_pb
from agentd.grpc.signals import attributes_from_pb, scalar_attributes
from agentd.grpc.tenancy import run_in_tenant, scope_id, scope_resource
from agentd.grpc.values import from_value, optional_struct
from agentd.grpc.violations import Violations
from agentd.runtime.errors import NotFound
from agentd.runtime.host import Host
from agentd.runtime.lazy import lazy
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import Attributes, Signal
from agentd.runtime.threads import ActiveBehavior, IdleBehavior, RouteRequest, Routing
from agentd.runtime.unset import UNSET
from agentd_proto.v1 import signal_pb2 as spb

if TYPE_CHECKING:
    from agentd.runtime import state_signals
    from agentd.runtime.state_signals import StateSignalRequest
else:
    state_signals = lazy("agentd.runtime.state_signals")  # the first state signal loads it

#: Unspecified: the agent's `signal_delivery` policy for the signal's category (else deliver).
ACTIVE: dict[int, ActiveBehavior | None] = {
    spb.ACTIVE_BEHAVIOR_UNSPECIFIED: None,
    spb.ACTIVE_BEHAVIOR_DELIVER: "deliver",
    spb.ACTIVE_BEHAVIOR_PERSIST: "persist",
    spb.ACTIVE_BEHAVIOR_DISCARD: "discard",
}
IDLE: dict[int, IdleBehavior] = {
    spb.IDLE_BEHAVIOR_UNSPECIFIED: "wake",
    spb.IDLE_BEHAVIOR_WAKE: "wake",
    spb.IDLE_BEHAVIOR_PERSIST: "persist",
    spb.IDLE_BEHAVIOR_DISCARD: "discard",
}


#: StateSignalRequest's fields that StateSignalInput names otherwise (in the order checked).
_STATE_FIELDS = {"lane": "id", "cache_key": "cache_key"}


class RouteFields(TypedDict):
    """RouteRequest's fields but the agent, the signal and `queue`: where and how."""

    resource_id: str
    thread_id: str
    run_id: str | None
    if_active: ActiveBehavior | None
    if_idle: IdleBehavior
    active_attributes: Attributes
    idle_attributes: Attributes
    stream_options: ExecutionOptions | None
    tenant: str


async def route_fields(
    host: Host,
    v: Violations,
    *,
    resource_id: str,
    thread_id: str,
    run_id: str = "",
    if_active: spb.IfActive | None = None,
    if_idle: spb.IfIdle | None = None,
    default_options: ExecutionOptions | None = None,
) -> RouteFields:
    """The target (a thread, or an active run: NOT_FOUND when it is not one) and
    both behaviours; problems go to `v`."""
    if not run_id and not (resource_id and thread_id):
        v.add("target", "set target.resource_id and target.thread_id (or the run_id of an active run)")
    resource_id = scope_resource(resource_id, "target.resource_id")
    thread_id = scope_id(thread_id, "target.thread_id")
    check_id_chars(run_id, "target.run_id")
    if run_id and not thread_id:
        found = await host.threads.thread_of_run(run_id)
        if found is None or not run_in_tenant(found[1], found[0]):  # another tenant's run does not exist here
            raise NotFound(f"run {run_id!r} is not active", "RUN_NOT_FOUND", {"run_id": run_id})
        resource_id, thread_id = found
    active_behavior = ACTIVE.get(if_active.behavior) if if_active is not None else None
    idle_behavior = IDLE.get(if_idle.behavior) if if_idle is not None else "wake"
    if if_active is not None and if_active.behavior not in ACTIVE:
        v.add("if_active.behavior", "unknown behavior")
    if idle_behavior is None:
        v.add("if_idle.behavior", "unknown behavior")
    if run_id and if_idle is not None and if_idle.ByteSize() and not thread_id:
        v.add("if_idle", "a run-only target has no idle behaviour")
    stream_options = default_options
    if if_idle is not None and if_idle.HasField("stream_options"):
        # The woken run's memory is the target thread: these options are thread-bound.
        stream_options = host_options(host, if_idle.stream_options, "if_idle.stream_options", v, thread_bound=True)
    return RouteFields(
        resource_id=resource_id,
        thread_id=thread_id,
        run_id=run_id or None,
        if_active=active_behavior,
        if_idle=idle_behavior or "wake",
        active_attributes=scalar_attributes(if_active.attributes if if_active else [], "if_active.attributes", v),
        idle_attributes=scalar_attributes(if_idle.attributes if if_idle else [], "if_idle.attributes", v),
        stream_options=stream_options,
        tenant=caller().tenant,
    )


def route_request(
    agent_id: str, signal: Signal | None, fields: RouteFields, v: Violations, *, queue: bool = False
) -> RouteRequest:
    """The RouteRequest, once every problem so far is raised."""
    v.check()
    assert signal is not None  # a signal that did not build is a violation
    return RouteRequest(agent_id=agent_id, signal=signal, queue=queue, **fields)


def state_signal_request(
    agent_id: str, state: spb.StateSignalInput, fields: RouteFields, v: Violations
) -> StateSignalRequest:
    """A StateSignalInput for the runtime, its problems named under `state.`."""
    request = state_signals.StateSignalRequest(
        agent_id=agent_id,
        lane=state.id,
        cache_key=state.cache_key,
        mode="delta" if state.mode == spb.STATE_MODE_DELTA else "snapshot",
        contents=state.text or tuple(content_part_from_pb(part) for part in state.parts),
        value=from_value(state.value) if state.HasField("value") else UNSET,
        delta=from_value(state.delta) if state.HasField("delta") else UNSET,
        attributes=attributes_from_pb(state.attributes),
        metadata=optional_struct(state, "metadata"),
        provider_options=optional_struct(state, "provider_options"),
        tag_name=state.tag_name or None,
        signal_id=state.signal_id or None,
        **fields,
    )
    problems = [(_STATE_FIELDS.get(p.field, p.field), p.description) for p in request.violations()]
    if state.text and state.parts:  # a wire concern: the runtime takes one `contents`
        problems.insert(sum(f in _STATE_FIELDS.values() for f, _ in problems), ("parts", "set text or parts, not both"))
    for field, description in problems:
        v.add(f"state.{field}", description)
    v.check()
    return request


def decision_to_pb(routing: Routing) -> spb.RoutingDecision:
    if routing.action == "wake":
        return spb.RoutingDecision(wake=spb.RoutingWake(run_id=routing.run_id or ""))
    if routing.action == "deliver":
        return spb.RoutingDecision(deliver=spb.RoutingDeliver(run_id=routing.run_id or ""))
    if routing.action == "persist":
        return spb.RoutingDecision(persist=spb.RoutingPersist())
    if routing.action == "skipped_unchanged":
        return spb.RoutingDecision(skipped_unchanged=spb.RoutingSkippedUnchanged(reason="unchanged"))
    return spb.RoutingDecision(discard=spb.RoutingDiscard())
