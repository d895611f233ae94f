"""The ids, times and input the notification tests share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from agentd.runtime.notifications import NotificationInput

T0 = datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
AGENT, RESOURCE, THREAD = "support", "user-123", "thread-abc"
MINUTE = timedelta(minutes=1)


def note(summary: str = "CI failed on main", **kw: Any) -> NotificationInput:
    kw.setdefault("source", "github")
    kw.setdefault("kind", "ci-status")
    return NotificationInput(summary=summary, **kw)
