"""SignalService: messages, signals and state pushed into threads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentd.grpc import convert
from agentd.grpc.convert_signals import (
    attributes_from_pb,
    content_part_from_pb,
    message_input_from_pb,
    signal_input_from_pb,
    signal_to_pb,
)
from agentd.grpc.errors import Context
from agentd.grpc.validate import Violations, execution_options
from agentd.runtime.errors import InvalidArgument, NotFound
from agentd.runtime.host import Host
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import Signal, normalize_attributes
from agentd.runtime.state_signals import OMITTED, StateSignalRequest, send_state_signal
from agentd.runtime.threads import RouteRequest, Routing
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as pb

ACTIVE = {
    spb.ACTIVE_BEHAVIOR_UNSPECIFIED: "deliver",
    spb.ACTIVE_BEHAVIOR_DELIVER: "deliver",
    spb.ACTIVE_BEHAVIOR_PERSIST: "persist",
    spb.ACTIVE_BEHAVIOR_DISCARD: "discard",
}
IDLE = {
    spb.IDLE_BEHAVIOR_UNSPECIFIED: "wake",
    spb.IDLE_BEHAVIOR_WAKE: "wake",
    spb.IDLE_BEHAVIOR_PERSIST: "persist",
    spb.IDLE_BEHAVIOR_DISCARD: "discard",
}


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


@dataclass
class Delivery:
    """A validated send: where it goes and how."""

    resource_id: str
    thread_id: str
    run_id: str | None
    if_active: Any
    if_idle: Any
    active_attributes: Any
    idle_attributes: Any
    stream_options: ExecutionOptions | None


class SignalRouter:
    """Validation and routing shared by SignalService and ThreadService.Connect."""

    def __init__(self, host: Host) -> None:
        self.host = host

    async def delivery(
        self,
        v: Violations,
        *,
        resource_id: str,
        thread_id: str,
        run_id: str = "",
        if_active: spb.IfActive | None = None,
        if_idle: spb.IfIdle | None = None,
        default_options: ExecutionOptions | None = None,
    ) -> Delivery:
        if not run_id and not (resource_id and thread_id):
            v.add("target", "set target.resource_id and target.thread_id (or the run_id of an active run)")
        if run_id and not thread_id:
            found = await self.host.threads.thread_of_run(run_id)
            if found is None:
                raise NotFound(f"run {run_id!r} is not active", "RUN_NOT_FOUND", {"run_id": run_id})
            resource_id, thread_id = found
        active_behavior = ACTIVE.get(if_active.behavior) if if_active is not None else "deliver"
        idle_behavior = IDLE.get(if_idle.behavior) if if_idle is not None else "wake"
        if active_behavior is None:
            v.add("if_active.behavior", "unknown behavior")
        if idle_behavior is None:
            v.add("if_idle.behavior", "unknown behavior")
        if run_id and if_idle is not None and if_idle.ByteSize() and not thread_id:
            v.add("if_idle", "a run-only target has no idle behaviour")
        stream_options = default_options
        if if_idle is not None and if_idle.HasField("stream_options"):
            # The woken run's memory is the target thread: these options are thread-bound.
            stream_options = execution_options(
                if_idle.stream_options,
                "if_idle.stream_options",
                v,
                self.host.processors,
                self.host.step_functions,
                thread_bound=True,
            )
        return Delivery(
            resource_id=resource_id,
            thread_id=thread_id,
            run_id=run_id or None,
            if_active=active_behavior,
            if_idle=idle_behavior,
            active_attributes=self._scalar(if_active.attributes if if_active else [], "if_active.attributes", v),
            idle_attributes=self._scalar(if_idle.attributes if if_idle else [], "if_idle.attributes", v),
            stream_options=stream_options,
        )

    @staticmethod
    def _scalar(attributes: Any, path: str, v: Violations) -> Any:
        try:
            return normalize_attributes(attributes_from_pb(attributes), path=path, scalar_only=True)
        except InvalidArgument as exc:
            for violation in exc.violations:
                v.add(violation.field, violation.description)
            return ()

    async def route(self, agent_id: str, signal: Signal, delivery: Delivery, *, queue: bool = False) -> Routing:
        return await self.host.threads.route(
            RouteRequest(
                agent_id=agent_id,
                signal=signal,
                resource_id=delivery.resource_id,
                thread_id=delivery.thread_id,
                if_active=delivery.if_active,
                if_idle=delivery.if_idle,
                active_attributes=delivery.active_attributes,
                idle_attributes=delivery.idle_attributes,
                stream_options=delivery.stream_options,
                run_id=delivery.run_id,
                queue=queue,
            )
        )

    async def state_signal(self, agent_id: str, state: spb.StateSignalInput, delivery: Delivery, v: Violations) -> Any:
        """A state signal: deduped and versioned by the runtime, then routed."""
        if state.text and state.parts:
            v.add("state.parts", "set text or parts, not both")
        request = StateSignalRequest(
            agent_id=agent_id,
            resource_id=delivery.resource_id,
            thread_id=delivery.thread_id,
            lane=state.id,
            cache_key=state.cache_key,
            mode="delta" if state.mode == spb.STATE_MODE_DELTA else "snapshot",
            contents=state.text or tuple(content_part_from_pb(part) for part in state.parts),
            value=convert.from_value(state.value) if state.HasField("value") else OMITTED,
            delta=convert.from_value(state.delta) if state.HasField("delta") else OMITTED,
            attributes=attributes_from_pb(state.attributes),
            metadata=convert.from_struct(state.metadata) if state.HasField("metadata") else None,
            provider_options=convert.from_struct(state.provider_options)
            if state.HasField("provider_options")
            else None,
            tag_name=state.tag_name or None,
            signal_id=state.signal_id or None,
            if_active=delivery.if_active,
            if_idle=delivery.if_idle,
            active_attributes=delivery.active_attributes,
            idle_attributes=delivery.idle_attributes,
            stream_options=delivery.stream_options,
            run_id=delivery.run_id,
        )
        for item in request.violations():
            v.add("state." + ("id" if item.field == "lane" else item.field), item.description)
        v.check()
        result = await send_state_signal(request, storage=self.host.storage, threads=self.host.threads)
        return result.routing.signal, result.routing, result.version


def _target(v: Violations, agent_id: str, target: spb.SignalTarget) -> None:
    v.require(agent_id, "agent_id")


# ---------------------------------------------------------------- notifications

PRIORITY_TO_PB = {
    "low": spb.NOTIFICATION_PRIORITY_LOW,
    "medium": spb.NOTIFICATION_PRIORITY_MEDIUM,
    "high": spb.NOTIFICATION_PRIORITY_HIGH,
    "urgent": spb.NOTIFICATION_PRIORITY_URGENT,
}
PRIORITY_FROM_PB = {v: k for k, v in PRIORITY_TO_PB.items()}
STATUS_TO_PB = {
    "pending": spb.NOTIFICATION_STATUS_PENDING,
    "delivered": spb.NOTIFICATION_STATUS_DELIVERED,
    "seen": spb.NOTIFICATION_STATUS_SEEN,
    "dismissed": spb.NOTIFICATION_STATUS_DISMISSED,
    "archived": spb.NOTIFICATION_STATUS_ARCHIVED,
    "discarded": spb.NOTIFICATION_STATUS_DISCARDED,
    "failed": spb.NOTIFICATION_STATUS_FAILED,
}
STATUS_FROM_PB = {v: k for k, v in STATUS_TO_PB.items()}
ACTION_TO_PB = {
    "deliver": spb.DELIVERY_ACTION_DELIVER,
    "queue": spb.DELIVERY_ACTION_QUEUE,
    "defer": spb.DELIVERY_ACTION_DEFER,
    "summarize": spb.DELIVERY_ACTION_SUMMARIZE,
    "persist": spb.DELIVERY_ACTION_PERSIST,
    "discard": spb.DELIVERY_ACTION_DISCARD,
}


def notification_to_pb(record: Any) -> spb.Notification:
    from agentd.grpc.convert_signals import attributes_to_pb

    t = convert.to_timestamp
    return spb.Notification(
        id=record.id,
        thread_id=record.thread_id,
        resource_id=record.resource_id or "",
        agent_id=record.agent_id or "",
        source=record.source,
        kind=record.kind,
        summary=record.summary,
        priority=PRIORITY_TO_PB[record.priority],
        status=STATUS_TO_PB[record.status],
        payload=convert.to_value(record.payload) if record.payload is not None else None,
        source_id=record.source_id or "",
        dedupe_key=record.dedupe_key or "",
        coalesce_key=record.coalesce_key or "",
        coalesced_count=record.coalesced_count,
        attributes=attributes_to_pb(record.attributes),
        metadata=convert.to_struct(record.metadata),
        create_time=t(record.created_at),
        update_time=t(record.updated_at),
        delivered_time=t(record.delivered_at),
        seen_time=t(record.seen_at),
        dismissed_time=t(record.dismissed_at),
        archived_time=t(record.archived_at),
        discarded_time=t(record.discarded_at),
        deliver_time=t(record.deliver_at),
        summary_time=t(record.summary_at),
        delivery_reason=record.delivery_reason or "",
        delivery_attempts=record.delivery_attempts,
        last_delivery_attempt_time=t(record.last_delivery_attempt_at),
        last_delivery_error=record.last_delivery_error or "",
        delivered_signal_id=record.delivered_signal_id or "",
        summary_signal_id=record.summary_signal_id or "",
    )


def decision_of_delivery_to_pb(decision: Any) -> spb.DeliveryDecision:
    return spb.DeliveryDecision(
        action=ACTION_TO_PB.get(decision.action, spb.DELIVERY_ACTION_UNSPECIFIED),
        deliver_time=convert.to_timestamp(decision.deliver_at),
        summary_time=convert.to_timestamp(decision.summary_at),
        reason=decision.reason or "",
    )


class SignalService:
    def __init__(self, host: Host) -> None:
        self.host = host
        self.router = SignalRouter(host)

    async def _delivery(self, request: Any, v: Violations) -> Delivery:
        _target(v, request.agent_id, request.target)
        return await self.router.delivery(
            v,
            resource_id=request.target.resource_id,
            thread_id=request.target.thread_id,
            run_id=request.target.run_id,
            if_active=request.if_active if request.HasField("if_active") else None,
            if_idle=request.if_idle if request.HasField("if_idle") else None,
        )

    @staticmethod
    def _signal(build: Any, v: Violations) -> Signal | None:
        try:
            return build()  # type: ignore[no-any-return]
        except InvalidArgument as exc:
            for violation in exc.violations:
                v.add(violation.field, violation.description, exc.reason)
            return None

    async def SendMessage(self, request: pb.SendMessageRequest, context: Context) -> Any:
        v = Violations()
        delivery = await self._delivery(request, v)
        signal = self._signal(lambda: message_input_from_pb(request.message, "message"), v)
        v.check()
        assert signal is not None
        routing = await self.router.route(request.agent_id, signal, delivery)
        return pb.SendMessageResponse(signal=signal_to_pb(routing.signal or signal), decision=decision_to_pb(routing))

    async def QueueMessage(self, request: pb.QueueMessageRequest, context: Context) -> Any:
        v = Violations()
        _target(v, request.agent_id, request.target)
        delivery = await self.router.delivery(
            v,
            resource_id=request.target.resource_id,
            thread_id=request.target.thread_id,
            run_id=request.target.run_id,
            if_idle=request.if_idle if request.HasField("if_idle") else None,
        )
        signal = self._signal(lambda: message_input_from_pb(request.message, "message"), v)
        v.check()
        assert signal is not None
        routing = await self.router.route(request.agent_id, signal, delivery, queue=True)
        return pb.QueueMessageResponse(signal=signal_to_pb(routing.signal or signal), decision=decision_to_pb(routing))

    async def SendSignal(self, request: pb.SendSignalRequest, context: Context) -> Any:
        v = Violations()
        delivery = await self._delivery(request, v)
        signal = self._signal(lambda: signal_input_from_pb(request.signal, "signal"), v)
        v.check()
        assert signal is not None
        routing = await self.router.route(request.agent_id, signal, delivery)
        return pb.SendSignalResponse(signal=signal_to_pb(routing.signal or signal), decision=decision_to_pb(routing))

    async def SendStateSignal(self, request: pb.SendStateSignalRequest, context: Context) -> Any:
        v = Violations()
        delivery = await self._delivery(request, v)
        if not delivery.thread_id:
            v.add("target.thread_id", "state signals are thread-scoped")
        signal, routing, version = await self.router.state_signal(request.agent_id, request.state, delivery, v)
        return pb.SendStateSignalResponse(
            signal=signal_to_pb(signal) if signal is not None else None,
            decision=decision_to_pb(routing),
            version=version,
        )

    async def SendNotification(self, request: pb.SendNotificationRequest, context: Context) -> Any:
        from agentd.runtime.notifications import NotificationInput, validate_input

        v = Violations()
        v.require(request.agent_id, "agent_id")
        v.require(request.resource_id, "resource_id")
        v.require(request.thread_id, "thread_id")
        n = request.notification
        if n.priority not in PRIORITY_FROM_PB and n.priority != spb.NOTIFICATION_PRIORITY_UNSPECIFIED:
            v.add("notification.priority", "unknown priority")
        stream_options = None
        if request.HasField("idle_stream_options"):
            stream_options = execution_options(
                request.idle_stream_options,
                "idle_stream_options",
                v,
                self.host.processors,
                self.host.step_functions,
                thread_bound=True,
            )
        notification = NotificationInput(
            source=n.source,
            kind=n.kind,
            summary=n.summary,
            priority=PRIORITY_FROM_PB.get(n.priority),  # type: ignore[arg-type]
            payload=convert.from_value(n.payload) if n.HasField("payload") else None,
            source_id=n.source_id or None,
            dedupe_key=n.dedupe_key or None,
            coalesce_key=n.coalesce_key or None,
            attributes=attributes_from_pb(n.attributes),
            metadata=convert.from_struct(n.metadata) if n.HasField("metadata") else None,
        )
        try:
            validate_input(notification)
        except InvalidArgument as exc:
            for violation in exc.violations:
                v.add(violation.field, violation.description)
        v.check()
        self.host.agents.get(request.agent_id)
        sent = await self.host.notifications.send(
            notification,
            agent_id=request.agent_id,
            resource_id=request.resource_id,
            thread_id=request.thread_id,
            route=self.host.route_notification,
            thread_state=self.host.thread_state,
            stream_options=stream_options,
        )
        routing = None
        if sent.routing is not None:
            routing = decision_to_pb(Routing(sent.routing.action, sent.routing.run_id))  # type: ignore[arg-type]
        return pb.SendNotificationResponse(
            notification=notification_to_pb(sent.record),
            decision=decision_of_delivery_to_pb(sent.decision),
            signal=signal_to_pb(sent.signal) if sent.signal is not None else None,
            routing=routing,
        )

    async def ListNotifications(self, request: pb.ListNotificationsRequest, context: Context) -> Any:
        from agentd.grpc import paging
        from agentd.grpc.validate import page_size
        from agentd.runtime.notifications import NotificationQuery

        v = Violations()
        v.require(request.thread_id, "thread_id")
        size = page_size(request.page_size, "page_size", v)
        statuses = []
        for i, status in enumerate(request.statuses):
            if status not in STATUS_FROM_PB:
                v.add(f"statuses[{i}]", "unknown status")
            else:
                statuses.append(STATUS_FROM_PB[status])
        priorities = []
        for i, priority in enumerate(request.priorities):
            if priority not in PRIORITY_FROM_PB:
                v.add(f"priorities[{i}]", "unknown priority")
            else:
                priorities.append(PRIORITY_FROM_PB[priority])
        kind = f"notifications:{request.thread_id}"
        cursor = paging.decode(kind, request.page_token)
        v.check()
        query = NotificationQuery(
            thread_id=request.thread_id,
            status=statuses or None,  # type: ignore[arg-type]
            priority=priorities or None,  # type: ignore[arg-type]
            source=request.source or None,
            resource_id=request.resource_id or None,
            agent_id=request.agent_id or None,
            search=request.search or None,
            limit=size,
            cursor=cursor,
        )
        try:
            page = await self.host.notifications.list_notifications(query)
        except ValueError:
            raise InvalidArgument.field("page_token", "is not a page token this list issued") from None
        return pb.ListNotificationsResponse(
            notifications=[notification_to_pb(r) for r in page.records],
            next_page_token=paging.encode(kind, page.next_cursor) if page.next_cursor else "",
        )

    async def UpdateNotificationStatus(self, request: pb.UpdateNotificationStatusRequest, context: Context) -> Any:
        v = Violations()
        v.require(request.thread_id, "thread_id")
        v.require(request.notification_id, "notification_id")
        status = STATUS_FROM_PB.get(request.status)
        if status not in ("seen", "dismissed", "archived"):
            v.add("status", "must be NOTIFICATION_STATUS_SEEN, _DISMISSED or _ARCHIVED")
        v.check()
        record = await self.host.notifications.set_status(request.thread_id, request.notification_id, status)  # type: ignore[arg-type]
        return pb.UpdateNotificationStatusResponse(notification=notification_to_pb(record))
