"""Notifications: a per-thread inbox of records, the policy that decides when
each one reaches the model, and the dispatcher that sends what has come due.

    record    `NotificationRecord`, created (or coalesced into a pending twin)
              by `NotificationStore.create`.                    (record, store)
    query     `NotificationQuery` / `NotificationPage`: a thread's records,
              filtered and paged.                                      (query)
    policy    `DeliveryPolicy.decide(record, thread_state, now)` answers a
              `DeliveryDecision`: deliver now, summarize (now or later), defer
              a full delivery, persist (inbox only), or discard.      (policy)
    render    the `<notification>` and `<notification-summary>` signals. (render)
    send      `Notifications.send` creates the record, decides, and routes a
              full `<notification>` or a one-record `<notification-summary>`.
    dispatch  `Notifications.dispatch_due` sends what became due: per thread,
              full deliveries and one summary, highest priority first. (service)
    inbox     the `notification-inbox` tool the model reads its inbox with. (inbox)

Routing stays outside: `send`, `dispatch_due` and the inbox tool take a
`route` callback (and a `thread_state` callback) that the thread runtime
supplies (routing), so the package runs and is tested alone.

Import from here; the modules import one another only downwards
(record <- query <- store; record <- policy <- routing; render; then
service, then inbox), never this package.

Each name is read from its module on first use (`lazy.lazy_exports`): a
server whose agents set no delivery policy and that is sent no notification
loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentd.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from agentd.runtime.notifications.inbox import INBOX_TOOL_NAME, NotificationInbox, create_notification_inbox_tool
    from agentd.runtime.notifications.policy import (
        DELIVERY_ACTIONS,
        THREAD_STATES,
        Decider,
        DecisionInput,
        DecisionLike,
        DeliveryAction,
        DeliveryDecision,
        DeliveryPolicy,
        PolicyRule,
        ThreadState,
        default_decision,
    )
    from agentd.runtime.notifications.query import (
        NotificationPage,
        NotificationQuery,
        decode_cursor,
        encode_cursor,
        matches_query,
    )
    from agentd.runtime.notifications.record import (
        PRIORITIES,
        PRIORITY_RANK,
        STATUS_STAMPS,
        STATUSES,
        NotificationInput,
        NotificationPatch,
        NotificationRecord,
        Priority,
        Status,
        apply_patch,
        coalesce_record,
        due_at,
        matches_coalesce,
        new_record,
        validate_input,
    )
    from agentd.runtime.notifications.render import (
        NotificationSummary,
        notification_signal,
        summarize_records,
        summary_signal,
    )
    from agentd.runtime.notifications.routing import IdleBehavior, Route, RouteAction, RouteResult, ThreadStateFn
    from agentd.runtime.notifications.service import (
        MAX_DELIVERY_ATTEMPTS,
        DispatchFailure,
        DispatchResult,
        Notifications,
        SendResult,
    )
    from agentd.runtime.notifications.store import (
        Creation,
        InMemoryNotificationStore,
        NotificationExists,
        NotificationNotFound,
        NotificationStore,
    )
    from agentd.runtime.unset import UNSET

__all__ = [
    "DELIVERY_ACTIONS",
    "INBOX_TOOL_NAME",
    "MAX_DELIVERY_ATTEMPTS",
    "PRIORITIES",
    "PRIORITY_RANK",
    "STATUSES",
    "STATUS_STAMPS",
    "THREAD_STATES",
    "UNSET",
    "Creation",
    "Decider",
    "DecisionInput",
    "DecisionLike",
    "DeliveryAction",
    "DeliveryDecision",
    "DeliveryPolicy",
    "DispatchFailure",
    "DispatchResult",
    "IdleBehavior",
    "InMemoryNotificationStore",
    "NotificationExists",
    "NotificationInbox",
    "NotificationInput",
    "NotificationNotFound",
    "NotificationPage",
    "NotificationPatch",
    "NotificationQuery",
    "NotificationRecord",
    "NotificationStore",
    "NotificationSummary",
    "Notifications",
    "PolicyRule",
    "Priority",
    "Route",
    "RouteAction",
    "RouteResult",
    "SendResult",
    "Status",
    "ThreadState",
    "ThreadStateFn",
    "apply_patch",
    "coalesce_record",
    "create_notification_inbox_tool",
    "decode_cursor",
    "default_decision",
    "due_at",
    "encode_cursor",
    "matches_coalesce",
    "matches_query",
    "new_record",
    "notification_signal",
    "summarize_records",
    "summary_signal",
    "validate_input",
]

_EXPORTS = {
    "Creation": "agentd.runtime.notifications.store",
    "DELIVERY_ACTIONS": "agentd.runtime.notifications.policy",
    "Decider": "agentd.runtime.notifications.policy",
    "DecisionInput": "agentd.runtime.notifications.policy",
    "DecisionLike": "agentd.runtime.notifications.policy",
    "DeliveryAction": "agentd.runtime.notifications.policy",
    "DeliveryDecision": "agentd.runtime.notifications.policy",
    "DeliveryPolicy": "agentd.runtime.notifications.policy",
    "DispatchFailure": "agentd.runtime.notifications.service",
    "DispatchResult": "agentd.runtime.notifications.service",
    "INBOX_TOOL_NAME": "agentd.runtime.notifications.inbox",
    "IdleBehavior": "agentd.runtime.notifications.routing",
    "InMemoryNotificationStore": "agentd.runtime.notifications.store",
    "MAX_DELIVERY_ATTEMPTS": "agentd.runtime.notifications.service",
    "NotificationExists": "agentd.runtime.notifications.store",
    "NotificationInbox": "agentd.runtime.notifications.inbox",
    "NotificationInput": "agentd.runtime.notifications.record",
    "NotificationNotFound": "agentd.runtime.notifications.store",
    "NotificationPage": "agentd.runtime.notifications.query",
    "NotificationPatch": "agentd.runtime.notifications.record",
    "NotificationQuery": "agentd.runtime.notifications.query",
    "NotificationRecord": "agentd.runtime.notifications.record",
    "NotificationStore": "agentd.runtime.notifications.store",
    "NotificationSummary": "agentd.runtime.notifications.render",
    "Notifications": "agentd.runtime.notifications.service",
    "PRIORITIES": "agentd.runtime.notifications.record",
    "PRIORITY_RANK": "agentd.runtime.notifications.record",
    "PolicyRule": "agentd.runtime.notifications.policy",
    "Priority": "agentd.runtime.notifications.record",
    "Route": "agentd.runtime.notifications.routing",
    "RouteAction": "agentd.runtime.notifications.routing",
    "RouteResult": "agentd.runtime.notifications.routing",
    "STATUSES": "agentd.runtime.notifications.record",
    "STATUS_STAMPS": "agentd.runtime.notifications.record",
    "SendResult": "agentd.runtime.notifications.service",
    "Status": "agentd.runtime.notifications.record",
    "THREAD_STATES": "agentd.runtime.notifications.policy",
    "ThreadState": "agentd.runtime.notifications.policy",
    "ThreadStateFn": "agentd.runtime.notifications.routing",
    "UNSET": "agentd.runtime.unset",
    "apply_patch": "agentd.runtime.notifications.record",
    "coalesce_record": "agentd.runtime.notifications.record",
    "create_notification_inbox_tool": "agentd.runtime.notifications.inbox",
    "decode_cursor": "agentd.runtime.notifications.query",
    "default_decision": "agentd.runtime.notifications.policy",
    "due_at": "agentd.runtime.notifications.record",
    "encode_cursor": "agentd.runtime.notifications.query",
    "matches_coalesce": "agentd.runtime.notifications.record",
    "matches_query": "agentd.runtime.notifications.query",
    "new_record": "agentd.runtime.notifications.record",
    "notification_signal": "agentd.runtime.notifications.render",
    "summarize_records": "agentd.runtime.notifications.render",
    "summary_signal": "agentd.runtime.notifications.render",
    "validate_input": "agentd.runtime.notifications.record",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
