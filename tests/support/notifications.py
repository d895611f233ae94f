"""The ids, times and input the notification tests share, and records made
and rescheduled through any store."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agentd.runtime.notifications import NotificationInput, NotificationPatch, NotificationRecord, NotificationStore
from support.clocks import T0

AGENT, RESOURCE, THREAD = "support", "user-123", "thread-abc"
MINUTE = timedelta(minutes=1)


def note(summary: str = "CI failed on main", **kw: Any) -> NotificationInput:
    kw.setdefault("source", "github")
    kw.setdefault("kind", "ci-status")
    return NotificationInput(summary=summary, **kw)


async def create(store: NotificationStore, value: NotificationInput | None = None, **kw: Any) -> NotificationRecord:
    kw.setdefault("thread_id", THREAD)
    kw.setdefault("resource_id", RESOURCE)
    kw.setdefault("agent_id", AGENT)
    kw.setdefault("now", T0)
    return await store.create(value or note(), **kw)


async def schedule(store: NotificationStore, record: NotificationRecord, **patch: Any) -> NotificationRecord:
    return await store.update(record.thread_id, record.id, NotificationPatch(**patch), now=T0)
