"""Notifications over every store (in memory, SQLite, Redis): send and the
dispatcher, and the inbox tool. Routing and thread state are fakes that record
their calls; time is always an argument, so nothing sleeps. The store suite is
tests/redis/test_notification_store.py; the delivery policy and rendering,
which need no store, are tests/unit/test_notification_policy.py."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import pytest

from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.notifications import (
    INBOX_TOOL_NAME,
    MAX_DELIVERY_ATTEMPTS,
    DecisionInput,
    DeliveryDecision,
    DeliveryPolicy,
    InMemoryNotificationStore,
    NotificationInbox,
    NotificationInput,
    NotificationNotFound,
    NotificationPatch,
    NotificationQuery,
    NotificationRecord,
    Notifications,
    NotificationStore,
    RouteResult,
    SendResult,
    create_notification_inbox_tool,
)
from agentd.runtime.signals import Signal
from agentd.runtime.tools import ToolContext
from support.notifications import AGENT, MINUTE, RESOURCE, T0, THREAD, create, note, schedule

# ---------------------------------------------------------------- fakes


@dataclass
class Call:
    signal: Signal
    agent_id: str
    resource_id: str
    thread_id: str
    idle_behavior: str
    stream_options: Any


class Router:
    """The thread runtime, faked: an active thread takes `deliver` into its
    run; an idle one is woken (`wake`) or written to (`persist`)."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.state_calls: list[tuple[str, str]] = []
        self.states: dict[tuple[str, str], str] = {}
        self.error: Exception | None = None
        self.state_error: Exception | None = None
        self.forced: str | None = None
        self.runs = 0
        #: Called during routing (e.g. to mark the record seen meanwhile).
        self.during: Any = None

    def set_state(self, state: str, resource_id: str = RESOURCE, thread_id: str = THREAD) -> None:
        self.states[(resource_id, thread_id)] = state

    async def route(
        self,
        signal: Signal,
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        idle_behavior: str,
        stream_options: Any,
    ) -> RouteResult:
        self.calls.append(Call(signal, agent_id, resource_id, thread_id, idle_behavior, stream_options))
        if self.during is not None:
            await self.during(signal)
        if self.error is not None:
            raise self.error
        if self.forced is not None:
            return RouteResult(self.forced)  # type: ignore[arg-type]
        if self.states.get((resource_id, thread_id), "idle") == "active":
            return RouteResult("deliver", "run-active")
        if idle_behavior == "persist":
            return RouteResult("persist")
        self.runs += 1
        return RouteResult("wake", f"run-{self.runs}")

    async def thread_state(self, resource_id: str, thread_id: str) -> Any:
        self.state_calls.append((resource_id, thread_id))
        if self.state_error is not None:
            raise self.state_error
        return self.states.get((resource_id, thread_id), "idle")


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now


@pytest.fixture
def router() -> Router:
    return Router()


@pytest.fixture
def clock() -> Clock:
    return Clock()


async def send(
    service: Notifications,
    router: Router,
    value: NotificationInput,
    *,
    now: datetime | None = None,
    stream_options: Any = None,
) -> SendResult:
    return await service.send(
        value,
        agent_id=AGENT,
        resource_id=RESOURCE,
        thread_id=THREAD,
        route=router.route,
        thread_state=router.thread_state,
        now=now,
        stream_options=stream_options,
    )


# ================================================================ send


async def test_send_without_storage_is_rejected(router: Router) -> None:
    with pytest.raises(FailedPrecondition) as caught:
        await send(Notifications(None), router, note(priority="urgent"))
    assert caught.value.reason == "NOTIFICATIONS_UNAVAILABLE"
    assert router.calls == [] and router.state_calls == []


async def test_send_validates_before_creating(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    with pytest.raises(InvalidArgument) as caught:
        await service.send(
            [note("ok"), note("")],
            agent_id=AGENT,
            resource_id="",
            thread_id=THREAD,
            route=router.route,
            thread_state=router.thread_state,
            now=T0,
        )
    assert {v.field for v in caught.value.violations} == {"resource_id", "notifications[1].summary"}
    assert (await store.list_notifications(NotificationQuery(THREAD))).records == []
    assert router.calls == []


@pytest.mark.parametrize(
    ("priority", "reason"), [("urgent", "urgent"), ("high", "idle-high"), ("medium", "idle-medium")]
)
async def test_idle_thread_gets_an_immediate_full_delivery(
    store: NotificationStore, router: Router, priority: str, reason: str
) -> None:
    service = Notifications(store)
    result = await send(service, router, note(priority=priority), now=T0, stream_options={"max_steps": 3})
    assert result.decision.action == "deliver" and result.decision.reason == reason
    assert result.routing == RouteResult("wake", "run-1") and result.run_id == "run-1"
    assert result.signal is not None and result.signal.tag_name == "notification"
    assert dict(result.signal.attributes)["status"] == "delivered"
    assert result.signal.metadata is not None
    assert result.signal.metadata["notification"]["deliveredAt"] == "2024-05-06T07:08:09.123456Z"
    record = result.record
    assert (record.status, record.delivered_at, record.delivery_reason) == ("delivered", T0, reason)
    assert record.delivered_signal_id == result.signal.id
    assert not result.needs_dispatch
    [call] = router.calls
    assert (call.agent_id, call.resource_id, call.thread_id) == (AGENT, RESOURCE, THREAD)
    assert (call.idle_behavior, call.stream_options, call.signal) == ("wake", {"max_steps": 3}, result.signal)
    assert await store.get(THREAD, record.id) == record


async def test_idle_low_waits_for_a_persisted_summary(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    result = await send(service, router, note(priority="low"), now=T0)
    assert (result.decision.action, result.decision.reason) == ("summarize", "idle-low-summary")
    assert result.signal is None and router.calls == [] and result.needs_dispatch
    assert result.record.summary_at == T0 and result.record.status == "pending"

    dispatched = await service.dispatch_due(T0 + MINUTE, route=router.route, thread_state=router.thread_state)
    [call] = router.calls
    assert call.idle_behavior == "persist"  # all low: never wakes the model
    assert call.signal.tag_name == "notification-summary" and call.signal.contents == "github: 1"
    assert dispatched.signals == [call.signal] and dispatched.delivered == [] and dispatched.failed == []
    [summarized] = dispatched.summarized
    assert summarized.status == "pending" and summarized.summary_at is None
    assert summarized.summary_signal_id == call.signal.id
    assert summarized.last_delivery_attempt_at == T0 + MINUTE
    assert await store.list_due(T0 + 60 * MINUTE) == []
    assert router.runs == 0


async def test_active_high_summary_now_then_full_delivery_once_idle(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    router.set_state("active")
    result = await send(service, router, note(priority="high"), now=T0)
    assert result.decision.reason == "active-high-summary-then-full"
    assert result.signal is not None and result.signal.tag_name == "notification-summary"
    assert result.signal.attributes == (("pending", 1), ("priority", "high"))
    assert result.routing == RouteResult("deliver", "run-active")
    [call] = router.calls
    assert call.idle_behavior == "persist"
    record = result.record
    assert (record.status, record.summary_at, record.deliver_at) == ("pending", None, T0)
    assert record.summary_signal_id == result.signal.id and record.delivered_signal_id is None
    assert result.needs_dispatch

    # Still active: the full text waits.
    still = await service.dispatch_due(T0 + MINUTE, route=router.route, thread_state=router.thread_state)
    assert [r.id for r in still.skipped] == [record.id] and len(router.calls) == 1 and still.failed == []
    stored = await store.get(THREAD, record.id)
    assert stored is not None and stored.delivery_attempts == 0

    router.set_state("idle")
    done = await service.dispatch_due(T0 + 2 * MINUTE, route=router.route, thread_state=router.thread_state)
    [full] = done.delivered
    assert (full.status, full.delivered_at) == ("delivered", T0 + 2 * MINUTE)
    assert router.calls[-1].idle_behavior == "wake" and router.calls[-1].signal.tag_name == "notification"
    assert full.delivered_signal_id == router.calls[-1].signal.id == done.signals[0].id
    assert await store.list_due(T0 + 60 * MINUTE) == []


async def test_active_medium_is_batched_not_summarised_at_once(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    router.set_state("active")
    medium = await send(service, router, note(priority="medium"), now=T0)
    assert (medium.decision.action, medium.decision.reason) == ("summarize", "active-batch-summary")
    assert medium.signal is None and router.calls == [] and medium.record.summary_at == T0
    low = await send(service, router, note("Alice mentioned you", source="slack", priority="low"), now=T0)
    assert low.signal is None and low.record.summary_at == T0 and router.calls == []

    dispatched = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    [call] = router.calls
    assert call.idle_behavior == "wake"  # not all low
    assert call.signal.contents == "github: 1, slack: 1"
    assert call.signal.attributes == (("pending", 2), ("priority", "medium"))
    assert {r.id for r in dispatched.summarized} == {medium.record.id, low.record.id}
    assert all(r.status == "pending" and r.summary_signal_id == call.signal.id for r in dispatched.summarized)


async def test_dispatch_sends_high_full_delivery_before_medium_summary(
    store: NotificationStore, router: Router
) -> None:
    service = Notifications(store)
    older = await create(store, note("older medium", kind="deploy"), now=T0 - 3 * MINUTE)
    await schedule(store, older, deliver_at=T0 - 3 * MINUTE)
    medium = await create(store, note("medium", source="slack"), now=T0 - 2 * MINUTE)
    await schedule(store, medium, summary_at=T0 - MINUTE)
    high = await create(store, note("high", priority="high"), now=T0)
    await schedule(store, high, deliver_at=T0)
    dispatched = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    # Highest priority first, then the oldest: high full, medium full, medium summary.
    assert [c.signal.contents for c in router.calls] == ["high", "older medium", "slack: 1"]
    assert [c.signal.tag_name for c in router.calls] == ["notification", "notification", "notification-summary"]
    assert [s.id for s in dispatched.signals] == [c.signal.id for c in router.calls]
    assert [r.id for r in dispatched.delivered] == [high.id, older.id]
    assert [r.id for r in dispatched.summarized] == [medium.id]
    assert router.state_calls == [(RESOURCE, THREAD)]  # once per thread


async def test_custom_decide_defer(store: NotificationStore, router: Router) -> None:
    policy = DeliveryPolicy(
        decide=lambda given: DeliveryDecision("defer", deliver_at=given.now + 10 * MINUTE, reason="quiet-hours")
    )
    service = Notifications(store, policy=policy)
    result = await send(service, router, note(priority="urgent"), now=T0)
    assert router.calls == [] and result.signal is None and result.needs_dispatch
    record = result.record
    assert (record.status, record.deliver_at, record.delivery_reason) == ("pending", T0 + 10 * MINUTE, "quiet-hours")
    assert (
        await service.dispatch_due(T0 + 9 * MINUTE, route=router.route, thread_state=router.thread_state)
    ).signals == []
    later = await service.dispatch_due(T0 + 10 * MINUTE, route=router.route, thread_state=router.thread_state)
    assert [r.id for r in later.delivered] == [record.id]


async def test_default_summarize_policy_with_same_dedupe_key(store: NotificationStore, router: Router) -> None:
    service = Notifications(store, policy=DeliveryPolicy(default={"action": "summarize", "summary_at": T0 + MINUTE}))
    first = await send(service, router, note("1 failure", dedupe_key="ci"), now=T0)
    second = await send(service, router, note("2 failures", dedupe_key="ci"), now=T0 + MINUTE)
    assert second.record.id == first.record.id and second.record.coalesced_count == 2
    assert second.record.summary == "2 failures" and second.record.summary_at == T0 + MINUTE
    assert len((await store.list_notifications(NotificationQuery(THREAD))).records) == 1
    assert router.calls == []


async def test_routing_rejection_counts_an_attempt(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    router.error = RuntimeError("no model configured")
    result = await send(service, router, note(priority="urgent"), now=T0)
    record = result.record
    assert (record.status, record.delivery_attempts, record.last_delivery_error) == (
        "pending",
        1,
        "no model configured",
    )
    assert record.last_delivery_attempt_at == T0 and record.delivered_signal_id is None
    assert record.delivery_reason == "urgent"
    assert result.signal is None and result.routing is None
    # Scheduled now, so the dispatcher retries it.
    assert record.deliver_at == T0 and result.needs_dispatch
    router.error = None
    retried = await service.dispatch_due(T0 + MINUTE, route=router.route, thread_state=router.thread_state)
    assert [r.status for r in retried.delivered] == ["delivered"]


async def test_five_failing_dispatches_fail_the_record(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    record = await schedule(store, await create(store, note(priority="urgent")), deliver_at=T0)
    router.error = ConnectionError("broker down")
    for attempt in range(1, MAX_DELIVERY_ATTEMPTS + 1):
        result = await service.dispatch_due(T0 + attempt * MINUTE, route=router.route, thread_state=router.thread_state)
        [failure] = result.failed
        assert failure.error == "broker down" and failure.record.delivery_attempts == attempt
        assert failure.record.status == ("failed" if attempt == MAX_DELIVERY_ATTEMPTS else "pending")
    assert await store.list_due(T0 + 60 * MINUTE) == []
    assert len(router.calls) == MAX_DELIVERY_ATTEMPTS
    stored = await store.get(THREAD, record.id)
    assert stored is not None and stored.last_delivery_attempt_at == T0 + 5 * MINUTE
    # A record already at the limit is failed without counting further.
    over = await schedule(store, await create(store, note("other")), deliver_at=T0, delivery_attempts=7)
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    [failure] = result.failed
    assert (failure.record.id, failure.record.status, failure.record.delivery_attempts) == (over.id, "failed", 7)


async def test_refused_routing_at_dispatch_is_a_failure(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    await schedule(store, await create(store, note(priority="urgent")), deliver_at=T0)
    router.forced = "blocked"
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    assert [f.error for f in result.failed] == ["routing returned blocked"] and result.delivered == []


async def test_seen_while_in_flight_stays_seen(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    record = await schedule(store, await create(store, note(priority="high")), deliver_at=T0)

    async def user_reads_it(signal: Signal) -> None:
        await store.update(THREAD, record.id, NotificationPatch(status="seen"), now=T0)

    router.during = user_reads_it
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    [sent] = result.delivered
    assert (sent.status, sent.delivered_at, sent.seen_at) == ("seen", None, T0)
    assert sent.delivered_signal_id == router.calls[0].signal.id
    router.during = None
    again = await service.dispatch_due(T0 + MINUTE, route=router.route, thread_state=router.thread_state)
    assert again.signals == [] and len(router.calls) == 1


async def test_dispatch_reruns_the_policy_for_stream_options_and_hold(store: NotificationStore, router: Router) -> None:
    seen_states: list[str] = []

    def decide(given: DecisionInput) -> Any:
        seen_states.append(given.thread_state)
        if given.record.kind == "held":
            return {"action": "defer", "hold": True}
        return {"action": "defer", "deliver_at": given.now, "stream_options": {"request_context": {"k": "v"}}}

    service = Notifications(store, policies={AGENT: DeliveryPolicy(decide=decide)})
    router.set_state("idle")
    sent = await send(service, router, note(priority="urgent"), now=T0)
    held = await send(service, router, note(kind="held"), now=T0)
    assert held.record.deliver_at == T0  # a defer without a time: due at the next pass
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    [call] = router.calls
    assert call.stream_options == {"request_context": {"k": "v"}} and call.signal.attributes[0] == (
        "id",
        sent.record.id,
    )
    assert [r.id for r in result.skipped] == [held.record.id]
    stored = await store.get(THREAD, held.record.id)
    assert stored is not None and stored.delivery_attempts == 0 and stored.status == "pending"
    assert seen_states[-2:] == ["idle", "idle"]


async def test_a_failing_policy_at_dispatch_falls_back_to_a_bare_wake(store: NotificationStore, router: Router) -> None:
    def decide(given: DecisionInput) -> Any:
        if given.record.deliver_at is not None:
            raise RuntimeError("policy bug")
        return "defer"

    service = Notifications(store, policy=DeliveryPolicy(decide=decide))
    await send(service, router, note(), now=T0)
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    assert len(result.delivered) == 1 and router.calls[0].stream_options is None


async def test_seed_decide_summarizes_low_thirty_minutes_later(
    store: NotificationStore, router: Router, clock: Clock
) -> None:
    """The original's example: urgent delivers; low is summarised 30 minutes later."""

    def decide(given: DecisionInput) -> Any:
        if given.record.priority == "low":
            return DeliveryDecision("summarize", summary_at=given.now + timedelta(minutes=30))
        return None

    service = Notifications(store, policy=DeliveryPolicy(priorities={"urgent": "deliver"}, decide=decide), clock=clock)
    low = await send(service, router, note("3 new stars", priority="low"))
    assert low.record.summary_at == T0 + 30 * MINUTE and low.signal is None and low.record.delivery_reason is None
    urgent = await send(service, router, note("Prod is down", priority="urgent"))
    assert urgent.record.status == "delivered" and len(router.calls) == 1

    clock.advance(29 * MINUTE)
    early = await service.dispatch_due(route=router.route, thread_state=router.thread_state)
    assert early.signals == [] and len(router.calls) == 1
    clock.advance(MINUTE)
    due = await service.dispatch_due(route=router.route, thread_state=router.thread_state)
    [summary] = due.signals
    assert (summary.tag_name, summary.contents) == ("notification-summary", "github: 1")
    assert router.calls[-1].idle_behavior == "persist" and summary.created_at == T0 + 30 * MINUTE
    [record] = due.summarized
    assert (record.id, record.status, record.summary_signal_id) == (low.record.id, "pending", summary.id)


async def test_configured_rules_with_an_injected_clock(store: NotificationStore, router: Router, clock: Clock) -> None:
    policy = DeliveryPolicy.from_config(
        {
            "priorities": {"urgent": "deliver"},
            "rules": [
                {"match": {"priority": "low"}, "action": "summarize", "after": "30m", "reason": "low-batch"},
                {"match": {"source": "ci", "thread_state": "active"}, "action": "defer", "after": "10m"},
            ],
        }
    )
    service = Notifications(store, policy=policy, clock=clock)
    router.set_state("active")
    low = await send(service, router, note("nit", priority="low"))
    ci = await send(service, router, note("build", source="ci", priority="high"))
    assert (low.record.summary_at, low.record.delivery_reason) == (T0 + 30 * MINUTE, "low-batch")
    assert (ci.record.deliver_at, ci.decision.action) == (T0 + 10 * MINUTE, "defer")
    assert router.calls == []

    clock.advance(10 * MINUTE)
    router.set_state("idle")
    first = await service.dispatch_due(route=router.route, thread_state=router.thread_state)
    assert [r.id for r in first.delivered] == [ci.record.id] and first.summarized == []
    clock.advance(20 * MINUTE)
    second = await service.dispatch_due(route=router.route, thread_state=router.thread_state)
    assert [r.id for r in second.summarized] == [low.record.id] and second.delivered == []
    assert [c.idle_behavior for c in router.calls] == ["wake", "persist"]


async def test_discard_and_persist_decisions(store: NotificationStore, router: Router) -> None:
    service = Notifications(
        store, policy=DeliveryPolicy(sources={"spam": {"action": "discard", "reason": "muted"}}, default="persist")
    )
    dropped = await send(service, router, note(source="spam"), now=T0)
    assert (dropped.record.status, dropped.record.discarded_at, dropped.record.delivery_reason) == (
        "discarded",
        T0,
        "muted",
    )
    kept = await send(service, router, note(priority="urgent"), now=T0)
    assert kept.record.status == "pending" and kept.record.deliver_at is None and kept.record.summary_at is None
    assert not kept.needs_dispatch and router.calls == []


async def test_persisted_or_discarded_routing_is_not_a_delivery(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    router.forced = "persist"
    result = await send(service, router, note(priority="urgent"), now=T0)
    assert result.routing == RouteResult("persist") and result.signal is not None
    assert result.record.status == "pending" and result.record.delivered_signal_id is None
    assert result.record.delivery_reason == "urgent"
    router.set_state("active")
    router.forced = "discard"
    summary = await send(service, router, note("high", priority="high"), now=T0)
    assert summary.signal is not None and summary.record.summary_signal_id is None
    assert summary.record.deliver_at == T0  # the full delivery still comes later


async def test_many_inputs_one_thread_state(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    results = await service.send(
        [note("a", priority="urgent"), note("b", priority="low"), note("c", priority="medium")],
        agent_id=AGENT,
        resource_id=RESOURCE,
        thread_id=THREAD,
        route=router.route,
        thread_state=router.thread_state,
        now=T0,
    )
    assert [r.decision.reason for r in results] == ["urgent", "idle-low-summary", "idle-medium"]
    assert router.state_calls == [(RESOURCE, THREAD)]
    assert [c.signal.contents for c in router.calls] == ["a", "c"]


async def test_dispatcher_failures_per_group(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    orphan = await schedule(store, await create(store, note("orphan"), agent_id=None), deliver_at=T0)
    no_resource = await schedule(store, await create(store, note("no resource"), resource_id=None), summary_at=T0)
    a = await schedule(store, await create(store, note("a")), deliver_at=T0)
    other = await schedule(store, await create(store, note("b"), thread_id="thread-2"), deliver_at=T0)
    router.state_error = RuntimeError("state unknown")
    result = await service.dispatch_due(T0, route=router.route, thread_state=router.thread_state)
    errors = {f.record.id: f.error for f in result.failed}
    assert errors == {
        orphan.id: "notification has no agent id",
        no_resource.id: "notification has no resource id",
        a.id: "state unknown",
        other.id: "state unknown",
    }
    assert all(f.record.delivery_attempts == 1 for f in result.failed)
    assert sorted(router.state_calls) == sorted([(RESOURCE, THREAD), (RESOURCE, "thread-2")])
    assert router.calls == []


# ================================================================ inbox tool


async def test_inbox_list_pages_through_unread_records(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    for i in range(25):
        await create(store, note(f"n{i}", payload={"secret": i}, metadata={"m": i}), now=T0 + i * MINUTE)
    inbox = NotificationInbox(service, router.route)
    first = await inbox.execute({"action": "list"}, thread_id=THREAD, now=T0 + 60 * MINUTE)
    second = await inbox.execute({"action": "list"}, thread_id=THREAD, now=T0 + 61 * MINUTE)
    third = await inbox.execute({"action": "list"}, thread_id=THREAD, now=T0 + 62 * MINUTE)
    assert (len(first["notifications"]), first["hasMore"], first["markedSeen"]) == (20, True, 20)
    assert (len(second["notifications"]), second["hasMore"], second["markedSeen"]) == (5, False, 5)
    assert third == {"notifications": [], "hasMore": False, "markedSeen": 0}
    ids = [n["id"] for n in first["notifications"] + second["notifications"]]
    assert len(set(ids)) == 25
    assert first["notifications"][0]["summary"] == "n24"  # newest first
    assert all(n["status"] == "seen" for n in first["notifications"])
    assert all("payload" not in n and "metadata" not in n for n in first["notifications"])
    # An explicit status lists without side effects.
    seen = await inbox.execute({"action": "list", "status": "seen", "limit": 5}, thread_id=THREAD)
    assert (len(seen["notifications"]), seen["hasMore"], seen["markedSeen"]) == (5, True, 0)
    assert router.calls == []


async def test_inbox_list_survives_a_failing_bulk_write(router: Router) -> None:
    class Flaky(InMemoryNotificationStore):
        async def update_status(self, *args: Any, **kwargs: Any) -> list[NotificationRecord]:
            raise RuntimeError("disk full")

    store = Flaky()
    await create(store, note("a"))
    page = await NotificationInbox(Notifications(store), router.route).execute({"action": "list"}, thread_id=THREAD)
    assert page["markedSeen"] == 0 and [n["status"] for n in page["notifications"]] == ["pending"]


async def test_inbox_read_search_and_status_actions(store: NotificationStore, router: Router) -> None:
    service = Notifications(store)
    fresh = await create(store, note("Deploy finished", kind="deploy"))
    delivered = await create(store, note("CI failed"))
    delivered = (
        await store.mark_delivered(THREAD, delivered.id, delivered_signal_id="sig-0", attempted_at=T0) or delivered
    )
    tool = create_notification_inbox_tool(service, route=router.route)
    assert tool.name == INBOX_TOOL_NAME
    context = ToolContext(run_id="run-1", agent_id=AGENT, tool_call_id="call-1", thread_id=THREAD, resource_id=RESOURCE)

    read = await tool.call({"action": "read", "id": fresh.id}, context)
    assert (read["delivered"], read["markedSeen"], read["unavailable"], read["alreadyRead"]) == (1, 1, 0, 0)
    [call] = router.calls
    assert call.signal.contents == "Deploy finished" and call.idle_behavior == "wake"
    stored = await store.get(THREAD, fresh.id)
    assert stored is not None and (stored.status, stored.delivered_signal_id) == ("seen", call.signal.id)

    already = await tool.call({"action": "read", "id": delivered.id}, context)
    assert (already["delivered"], already["markedSeen"]) == (0, 1) and len(router.calls) == 1
    again = await tool.call({"action": "read"}, context)
    assert (again["delivered"], again["markedSeen"], again["alreadyRead"]) == (0, 0, 0)
    missing = await tool.call({"action": "read", "id": "nope"}, context)
    assert missing["unavailable"] == 1

    found = await tool.call({"action": "search", "query": "DEPLOY"}, context)
    assert [n["id"] for n in found["notifications"]] == [fresh.id]
    dismissed = await tool.call({"action": "dismiss", "id": fresh.id}, context)
    assert dismissed["notification"]["status"] == "dismissed"
    archived = await tool.call({"action": "archive", "id": delivered.id}, context)
    assert archived["notification"]["status"] == "archived"
    for bad in ({"action": "search", "query": "  "}, {"action": "markSeen"}, {"action": "explode"}):
        with pytest.raises(InvalidArgument):
            await tool.call(bad, context)
    with pytest.raises(NotificationNotFound):
        await tool.call({"action": "markSeen", "id": "nope"}, context)
    with pytest.raises(InvalidArgument):
        await tool.call({"action": "list"}, ToolContext(run_id="r", agent_id=AGENT, tool_call_id="c"))


async def test_set_status_allows_only_reader_statuses(store: NotificationStore) -> None:
    service = Notifications(store)
    record = await create(store)
    assert (await service.set_status(THREAD, record.id, "seen", now=T0)).seen_at == T0
    with pytest.raises(InvalidArgument):
        await service.set_status(THREAD, record.id, "delivered", now=T0)
    with pytest.raises(NotificationNotFound):
        await service.set_status(THREAD, "missing", "seen")
