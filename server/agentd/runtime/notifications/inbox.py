"""The `notification-inbox` tool: the model reads its thread's inbox (list,
search, read), and marks records seen, dismissed or archived."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.notifications.query import NotificationQuery
from agentd.runtime.notifications.record import PRIORITIES, STATUSES, NotificationPatch, NotificationRecord, Status
from agentd.runtime.notifications.render import iso, notification_signal
from agentd.runtime.notifications.routing import Route, accepted, describe, route_record
from agentd.runtime.notifications.service import Notifications
from agentd.runtime.signals import JSON
from agentd.runtime.tools import Tool, ToolContext

INBOX_TOOL_NAME = "notification-inbox"

_INBOX_ACTIONS = ("list", "read", "markSeen", "dismiss", "archive", "search")
_UNREAD: tuple[Status, ...] = ("pending", "delivered")
_READABLE = frozenset(_UNREAD)
_STATUS_ACTIONS: dict[str, Status] = {"markSeen": "seen", "dismiss": "dismissed", "archive": "archived"}
INBOX_PAGE_SIZE = 20

INBOX_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(_INBOX_ACTIONS)},
        "threadId": {"type": "string"},
        "id": {"type": "string"},
        "status": {"type": "string", "enum": list(STATUSES)},
        "priority": {"type": "string", "enum": list(PRIORITIES)},
        "source": {"type": "string"},
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
    },
    "required": ["action"],
}


def _project(record: NotificationRecord) -> dict[str, JSON]:
    """What the agent sees of a record: no payload, no metadata."""
    out: dict[str, JSON] = {
        "id": record.id,
        "source": record.source,
        "kind": record.kind,
        "summary": record.summary,
        "priority": record.priority,
        "status": record.status,
        "coalescedCount": record.coalesced_count,
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
    }
    if record.attributes:
        out["attributes"] = dict(record.attributes)
    for name, key in (("delivered_at", "deliveredAt"), ("seen_at", "seenAt")):
        when = getattr(record, name)
        if when is not None:
            out[key] = iso(when)
    return out


class NotificationInbox:
    """The agent's view of its inbox (the `notification-inbox` tool's logic).
    Viewing marks seen: `list` returns unread records a page at a time and
    marks them seen, so repeated lists walk the backlog without repeats."""

    def __init__(self, notifications: Notifications, route: Route) -> None:
        self.notifications = notifications
        self.route = route

    async def execute(self, args: Mapping[str, Any], *, thread_id: str | None, now: datetime | None = None) -> Any:
        action = args.get("action")
        if action not in _INBOX_ACTIONS:
            raise InvalidArgument.field("action", f"one of {', '.join(_INBOX_ACTIONS)}")
        thread = args.get("threadId") or thread_id
        if not thread:
            raise InvalidArgument.field("threadId", "no thread: pass threadId or call from a thread")
        when = self.notifications.current_time(now)
        notification_id = args.get("id")
        if action in ("markSeen", "dismiss", "archive"):
            if not isinstance(notification_id, str) or not notification_id.strip():
                raise InvalidArgument.field("id", f"{action} needs a notification id")
            record = await self.notifications.set_status(thread, notification_id, _STATUS_ACTIONS[action], now=when)
            return {"notification": _project(record)}
        if action == "search":
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                raise InvalidArgument.field("query", "search needs a non-blank query")
            return await self._list(args, thread, when, search=query, default_unread=False)
        if action == "list":
            return await self._list(args, thread, when, search=None, default_unread=True)
        return await self._read(thread, notification_id if isinstance(notification_id, str) else None, when)

    async def _list(
        self, args: Mapping[str, Any], thread: str, now: datetime, *, search: str | None, default_unread: bool
    ) -> dict[str, Any]:
        store = self.notifications.require_store()
        explicit = args.get("status")
        limit = args.get("limit") or INBOX_PAGE_SIZE
        if not isinstance(limit, int) or limit < 1:
            raise InvalidArgument.field("limit", "a positive integer")
        page = await store.list_notifications(
            NotificationQuery(
                thread_id=thread,
                status=explicit if explicit else (_UNREAD if default_unread else None),
                priority=args.get("priority") or None,
                source=args.get("source") or None,
                search=search,
                limit=limit,
            )
        )
        records = page.records
        marked = 0
        fresh = [r.id for r in records if r.status in _READABLE]
        # An explicit status lists without side effects; otherwise viewing marks seen.
        if fresh and not explicit:
            try:
                updated = {r.id: r for r in await store.update_status(thread, fresh, "seen", now=now)}
            except Exception:
                updated = {}
            marked = len(updated)
            records = [updated.get(r.id, r) for r in records]
        return {
            "notifications": [_project(r) for r in records],
            "hasMore": page.next_cursor is not None,
            "markedSeen": marked,
        }

    async def _read(self, thread: str, notification_id: str | None, now: datetime) -> dict[str, Any]:
        store = self.notifications.require_store()
        if notification_id:
            found = await store.get(thread, notification_id)
            candidates = [found] if found is not None else []
            unavailable = 0 if found is not None else 1
        else:
            candidates = (
                await store.list_notifications(NotificationQuery(thread_id=thread, status=_UNREAD, limit=100))
            ).records
            unavailable = 0
        delivered = marked = already = 0
        for record in candidates:
            if record.status not in _READABLE:
                already += 1
                continue
            if record.delivered_signal_id:
                await store.update(thread, record.id, NotificationPatch(status="seen"), now=now)
                marked += 1
                continue
            if not record.agent_id or not record.resource_id:
                unavailable += 1
                continue
            signal = notification_signal(replace(record, status="seen", seen_at=now), now=now)
            try:
                accepted(await route_record(self.route, record, signal, idle_behavior="wake", stream_options=None))
            except Exception as exc:
                await self.notifications.attempt_failed(record, describe(exc), now)
                unavailable += 1
                continue
            await store.update(
                thread,
                record.id,
                NotificationPatch(
                    status="seen", delivered_signal_id=signal.id, delivered_at=now, last_delivery_attempt_at=now
                ),
                now=now,
            )
            delivered += 1
            marked += 1
        parts = [f"{delivered} delivered", f"{marked} marked seen"]
        if already:
            parts.append(f"{already} already read")
        if unavailable:
            parts.append(f"{unavailable} unavailable")
        return {
            "message": ", ".join(parts),
            "delivered": delivered,
            "markedSeen": marked,
            "unavailable": unavailable,
            "alreadyRead": already,
        }


def create_notification_inbox_tool(notifications: Notifications, *, route: Route) -> Tool:
    """The `notification-inbox` tool: list, search, read, markSeen, dismiss,
    archive the calling agent's thread inbox (or `threadId`'s)."""
    inbox = NotificationInbox(notifications, route)

    async def execute(args: Any, context: ToolContext) -> Any:
        return await inbox.execute(args if isinstance(args, Mapping) else {}, thread_id=context.thread_id)

    return Tool(
        INBOX_TOOL_NAME,
        "Notification inbox of this thread: list (unread, marks them seen), search (query), read (one id, "
        "or every unread one, injected as notifications), markSeen, dismiss or archive (id).",
        execute,
        INBOX_INPUT_SCHEMA,
    )
