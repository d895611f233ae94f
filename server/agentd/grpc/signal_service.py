"""SignalService: messages, signals, state and notifications pushed into threads."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agentd.grpc import paging
from agentd.grpc.authz import caller
from agentd.grpc.errors import Context
from agentd.grpc.options import host_options
from agentd.grpc.routing import RouteFields, decision_to_pb, route_fields, route_request, state_signal_request
from agentd.grpc.signals import message_input_from_pb, signal_input_from_pb, signal_to_pb
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.violations import Violations
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.host import Host
from agentd.runtime.lazy import lazy
from agentd.runtime.signals import Signal
from agentd.runtime.threads import Routing
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as pb
from agentd_proto.v1 import signal_service_pb2_grpc

if TYPE_CHECKING:
    from agentd.grpc import notifications
    from agentd.runtime import state_signals
    from agentd.runtime.notifications import store as notification_store
else:
    state_signals = lazy("agentd.runtime.state_signals")  # the first state signal loads it
    # The first notification RPC loads the notifications' converters and runtime.
    notifications = lazy("agentd.grpc.notifications")
    notification_store = lazy("agentd.runtime.notifications.store")


class SignalService(signal_service_pb2_grpc.SignalServiceServicer):
    def __init__(self, host: Host) -> None:
        self.host = host

    async def _route_fields(
        self,
        v: Violations,
        agent_id: str,
        target: spb.SignalTarget,
        if_active: spb.IfActive | None,
        if_idle: spb.IfIdle | None,
    ) -> RouteFields:
        v.require(agent_id, "agent_id")
        return await route_fields(
            self.host,
            v,
            resource_id=target.resource_id,
            thread_id=target.thread_id,
            run_id=target.run_id,
            if_active=if_active,
            if_idle=if_idle,
        )

    async def _send(
        self,
        request: pb.SendMessageRequest | pb.QueueMessageRequest | pb.SendSignalRequest,
        build: Callable[[], Signal],
        *,
        queue: bool = False,
    ) -> tuple[Signal, Routing]:
        """A signal routed into its target: the signal as routed, and where it went."""
        v = Violations()
        if_active = None if isinstance(request, pb.QueueMessageRequest) else _if_active(request)
        fields = await self._route_fields(v, request.agent_id, request.target, if_active, _if_idle(request))
        route = route_request(request.agent_id, v.collect(build), fields, v, queue=queue)
        routing = await self.host.threads.route(route)
        return routing.signal or route.signal, routing

    async def SendMessage(self, request: pb.SendMessageRequest, context: Context) -> pb.SendMessageResponse:
        signal, routing = await self._send(request, lambda: message_input_from_pb(request.message, "message"))
        return pb.SendMessageResponse(signal=signal_to_pb(signal), decision=decision_to_pb(routing))

    async def QueueMessage(self, request: pb.QueueMessageRequest, context: Context) -> pb.QueueMessageResponse:
        signal, routing = await self._send(
            request, lambda: message_input_from_pb(request.message, "message"), queue=True
        )
        return pb.QueueMessageResponse(signal=signal_to_pb(signal), decision=decision_to_pb(routing))

    async def SendSignal(self, request: pb.SendSignalRequest, context: Context) -> pb.SendSignalResponse:
        signal, routing = await self._send(request, lambda: signal_input_from_pb(request.signal, "signal"))
        return pb.SendSignalResponse(signal=signal_to_pb(signal), decision=decision_to_pb(routing))

    async def SendStateSignal(self, request: pb.SendStateSignalRequest, context: Context) -> pb.SendStateSignalResponse:
        v = Violations()
        fields = await self._route_fields(v, request.agent_id, request.target, _if_active(request), _if_idle(request))
        if not fields["thread_id"]:
            v.add("target.thread_id", "state signals are thread-scoped")
        state = state_signal_request(request.agent_id, request.state, fields, v)
        result = await state_signals.send_state_signal(state, storage=self.host.storage, threads=self.host.threads)
        signal = result.routing.signal
        return pb.SendStateSignalResponse(
            signal=signal_to_pb(signal) if signal is not None else None,
            decision=decision_to_pb(result.routing),
            version=result.version,
        )

    async def SendNotification(
        self, request: pb.SendNotificationRequest, context: Context
    ) -> pb.SendNotificationResponse:
        v = Violations()
        v.require_all(agent_id=request.agent_id, resource_id=request.resource_id, thread_id=request.thread_id)
        notifications.check_priority(request.notification, v)
        stream_options = None
        if request.HasField("idle_stream_options"):
            stream_options = host_options(
                self.host, request.idle_stream_options, "idle_stream_options", v, thread_bound=True
            )
        notification = notifications.notification_input(request.notification, v)
        v.check()
        self.host.agents.get(request.agent_id)
        sent = await self.host.notifications.send(
            notification,
            agent_id=request.agent_id,
            resource_id=scope_resource(request.resource_id, "resource_id"),
            thread_id=scope_id(request.thread_id, "thread_id"),
            route=self.host.route_notification,
            thread_state=self.host.thread_state,
            stream_options=stream_options,
        )
        routing = None
        if sent.routing is not None:
            routing = decision_to_pb(Routing(sent.routing.action, sent.routing.run_id))  # type: ignore[arg-type]
        return pb.SendNotificationResponse(
            notification=notifications.notification_to_pb(sent.record),
            decision=notifications.delivery_decision_to_pb(sent.decision),
            signal=signal_to_pb(sent.signal) if sent.signal is not None else None,
            routing=routing,
        )

    async def ListNotifications(
        self, request: pb.ListNotificationsRequest, context: Context
    ) -> pb.ListNotificationsResponse:
        v = Violations()
        query, kind = notifications.notification_query(request, v)
        v.check()
        try:
            page = await self.host.notifications.list_notifications(query)
        except ValueError:
            raise InvalidArgument.field("page_token", "is not a page token this list issued") from None
        return pb.ListNotificationsResponse(
            notifications=[notifications.notification_to_pb(r) for r in page.records],
            next_page_token=paging.encode(kind, page.next_cursor) if page.next_cursor else "",
        )

    async def UpdateNotificationStatus(
        self, request: pb.UpdateNotificationStatusRequest, context: Context
    ) -> pb.UpdateNotificationStatusResponse:
        v = Violations()
        v.require_all(thread_id=request.thread_id, notification_id=request.notification_id)
        status = notifications.STATUS_FROM_PB.get(request.status)
        if status not in ("seen", "dismissed", "archived"):
            v.add("status", "must be NOTIFICATION_STATUS_SEEN, _DISMISSED or _ARCHIVED")
        v.check()
        thread_id = scope_id(request.thread_id, "thread_id")
        who = caller()
        if not who.all_resources:  # only a notification of a resource it may act for
            found = await self.host.notification_store.get(thread_id, request.notification_id)
            if found is None or not who.may_act_for(who.unscoped(found.resource_id or "")):
                raise notification_store.NotificationNotFound(request.thread_id, request.notification_id)
        record = await self.host.notifications.set_status(thread_id, request.notification_id, status)  # type: ignore[arg-type]
        return pb.UpdateNotificationStatusResponse(notification=notifications.notification_to_pb(record))


def _if_active(
    request: pb.SendMessageRequest | pb.SendSignalRequest | pb.SendStateSignalRequest,
) -> spb.IfActive | None:
    return request.if_active if request.HasField("if_active") else None


def _if_idle(
    request: pb.SendMessageRequest | pb.QueueMessageRequest | pb.SendSignalRequest | pb.SendStateSignalRequest,
) -> spb.IfIdle | None:
    return request.if_idle if request.HasField("if_idle") else None
