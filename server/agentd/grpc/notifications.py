"""Notifications (the thread's inbox) to protobuf, and the notification
requests a caller sends to runtime inputs and queries."""

from __future__ import annotations

from agentd.grpc import paging
from agentd.grpc.authz import caller
from agentd.grpc.signals import attributes_from_pb, attributes_to_pb
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.values import (
    enum_names,
    enum_values,
    optional_struct,
    optional_value,
    to_struct,
    to_timestamp,
    to_value,
)
from agentd.grpc.violations import Violations
from agentd.runtime.notifications import (
    DELIVERY_ACTIONS,
    PRIORITIES,
    STATUSES,
    DeliveryDecision,
    NotificationInput,
    NotificationQuery,
    NotificationRecord,
    validate_input,
)
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as pb

PRIORITY_TO_PB = enum_values(spb.NotificationPriority, "NOTIFICATION_PRIORITY_", PRIORITIES)
PRIORITY_FROM_PB = {v: k for k, v in PRIORITY_TO_PB.items()}
STATUS_TO_PB = enum_values(spb.NotificationStatus, "NOTIFICATION_STATUS_", STATUSES)
STATUS_FROM_PB = {v: k for k, v in STATUS_TO_PB.items()}
ACTION_TO_PB = enum_values(spb.DeliveryAction, "DELIVERY_ACTION_", DELIVERY_ACTIONS)


def notification_to_pb(record: NotificationRecord) -> spb.Notification:
    t = to_timestamp
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
        payload=to_value(record.payload) if record.payload is not None else None,
        source_id=record.source_id or "",
        dedupe_key=record.dedupe_key or "",
        coalesce_key=record.coalesce_key or "",
        coalesced_count=record.coalesced_count,
        attributes=attributes_to_pb(record.attributes),
        metadata=to_struct(record.metadata),
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


def delivery_decision_to_pb(decision: DeliveryDecision) -> spb.DeliveryDecision:
    return spb.DeliveryDecision(
        action=ACTION_TO_PB.get(decision.action, spb.DELIVERY_ACTION_UNSPECIFIED),
        deliver_time=to_timestamp(decision.deliver_at),
        summary_time=to_timestamp(decision.summary_at),
        reason=decision.reason or "",
    )


def check_priority(n: spb.NotificationInput, v: Violations) -> None:
    if n.priority not in PRIORITY_FROM_PB and n.priority != spb.NOTIFICATION_PRIORITY_UNSPECIFIED:
        v.add("notification.priority", "unknown priority")


def notification_input(n: spb.NotificationInput, v: Violations) -> NotificationInput:
    """The runtime's input, checked by the runtime too (see check_priority)."""
    notification = NotificationInput(
        source=n.source,
        kind=n.kind,
        summary=n.summary,
        priority=PRIORITY_FROM_PB.get(n.priority),
        payload=optional_value(n, "payload"),
        source_id=n.source_id or None,
        dedupe_key=n.dedupe_key or None,
        coalesce_key=n.coalesce_key or None,
        attributes=attributes_from_pb(n.attributes),
        metadata=optional_struct(n, "metadata"),
    )
    v.collect(lambda: validate_input(notification))
    return notification


def notification_query(request: pb.ListNotificationsRequest, v: Violations) -> tuple[NotificationQuery, str]:
    """The query, and the page-token kind its answer's token is bound to."""
    v.require(request.thread_id, "thread_id")
    size = paging.page_size(request.page_size, "page_size", v)
    statuses = enum_names(request.statuses, STATUS_FROM_PB, "statuses", "status", v)
    priorities = enum_names(request.priorities, PRIORITY_FROM_PB, "priorities", "priority", v)
    kind = f"notifications:{request.thread_id}"
    cursor = paging.decode(kind, request.page_token)
    who = caller()
    if not who.all_resources and not request.resource_id:
        v.add("resource_id", "is required for a caller limited to some resources")
    query = NotificationQuery(
        thread_id=scope_id(request.thread_id, "thread_id"),
        status=statuses or None,
        priority=priorities or None,
        source=request.source or None,
        resource_id=scope_resource(request.resource_id, "resource_id") or None,
        agent_id=request.agent_id or None,
        search=request.search or None,
        limit=size,
        cursor=cursor,
    )
    return query, kind
