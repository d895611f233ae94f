"""The notifications service: `Notifications.send` creates (or coalesces) the
record, decides, and routes a full `<notification>` or a one-record
`<notification-summary>`; `Notifications.dispatch_due` sends what became
due: per thread, full deliveries and one summary, highest priority first.
Time is always an argument (`now`, or the service's injectable clock);
nothing here sleeps."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, overload

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.concurrency import to_its_end
from agentd.runtime.errors import FieldViolation, InvalidArgument
from agentd.runtime.messages import aware, utcnow
from agentd.runtime.notifications.policy import DeliveryDecision, DeliveryPolicy, ThreadState, check_state
from agentd.runtime.notifications.query import NotificationPage, NotificationQuery
from agentd.runtime.notifications.record import (
    PRIORITY_RANK,
    NotificationInput,
    NotificationPatch,
    NotificationRecord,
    Priority,
    Status,
    due_at,
    validate_input,
)
from agentd.runtime.notifications.render import notification_signal, summary_signal
from agentd.runtime.notifications.routing import (
    DELIVERED_ACTIONS,
    Route,
    RouteResult,
    ThreadStateFn,
    accepted,
    describe,
    route_record,
)
from agentd.runtime.notifications.store import NotificationNotFound, NotificationStore, no_store
from agentd.runtime.signals import Signal

#: A record whose delivery failed this many times becomes `failed` (no longer due).
MAX_DELIVERY_ATTEMPTS = 5


@dataclass
class SendResult:
    """What sending a notification did: its record, the decision, and the signal sent."""

    record: NotificationRecord
    decision: DeliveryDecision
    #: The signal emitted now (full, or the one-record summary), when routing returned.
    signal: Signal | None = None
    routing: RouteResult | None = None
    #: The record is scheduled (deliver_at or summary_at): keep the dispatcher running.
    needs_dispatch: bool = False

    @property
    def run_id(self) -> str | None:
        return self.routing.run_id if self.routing is not None else None


@dataclass
class DispatchFailure:
    """A record whose delivery failed, with why."""

    record: NotificationRecord
    error: str


@dataclass
class DispatchResult:
    """What one pass of the dispatcher did with the records that came due."""

    #: Full notifications sent (status delivered, or still seen when marked seen meanwhile).
    delivered: list[NotificationRecord] = field(default_factory=list)
    #: Covered by a summary signal: still pending, summary_at cleared, summary_signal_id set.
    summarized: list[NotificationRecord] = field(default_factory=list)
    #: Left pending without an attempt (policy hold, or a summarised high record while the thread is active).
    skipped: list[NotificationRecord] = field(default_factory=list)
    failed: list[DispatchFailure] = field(default_factory=list)
    #: Every signal routed, in order.
    signals: list[Signal] = field(default_factory=list)


@dataclass
class _Item:
    """A full delivery or a summary, queued for one thread."""

    priority: Priority
    created_at: datetime
    records: list[tuple[NotificationRecord, DeliveryDecision]]
    summary: bool


class Notifications:
    """The notifications service: send (create or coalesce, decide, route now
    when due) and dispatch (send what came due). One per process; policies are
    per agent (`policies`), with `policy` for agents without one."""

    def __init__(
        self,
        store: NotificationStore | None,
        *,
        policy: DeliveryPolicy | None = None,
        policies: Mapping[str, DeliveryPolicy] | None = None,
        clock: Callable[[], datetime] = utcnow,
        max_attempts: int = MAX_DELIVERY_ATTEMPTS,
    ) -> None:
        self.store = store
        self.policy = policy or DeliveryPolicy()
        self.policies: dict[str, DeliveryPolicy] = dict(policies or {})
        self.clock = clock
        self.max_attempts = max_attempts

    def policy_for(self, agent_id: str | None) -> DeliveryPolicy:
        return self.policies.get(agent_id or "", self.policy)

    def set_policy(self, agent_id: str, policy: DeliveryPolicy | None) -> None:
        if policy is None:
            self.policies.pop(agent_id, None)
        else:
            self.policies[agent_id] = policy

    def require_store(self) -> NotificationStore:
        """The store (FailedPrecondition NOTIFICATIONS_UNAVAILABLE when none is configured)."""
        if self.store is None:
            raise no_store()
        return self.store

    def current_time(self, now: datetime | None) -> datetime:
        """`now` made timezone-aware, or the service clock's time."""
        return aware(now if now is not None else self.clock())

    # ------------------------------------------------------------ inbox reads and writes

    async def list_notifications(self, query: NotificationQuery) -> NotificationPage:
        return await self.require_store().list_notifications(query)

    async def set_status(
        self, thread_id: str, notification_id: str, status: Status, *, now: datetime | None = None
    ) -> NotificationRecord:
        """UpdateNotificationStatus: seen, dismissed or archived only."""
        if status not in ("seen", "dismissed", "archived"):
            raise InvalidArgument.field("status", f"{status!r}: only seen, dismissed or archived can be set")
        return await self.require_store().update(thread_id, notification_id, NotificationPatch(status=status), now=now)

    # ------------------------------------------------------------ send

    @overload
    async def send(
        self,
        notification: NotificationInput,
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> SendResult: ...

    @overload
    async def send(
        self,
        notification: Sequence[NotificationInput],
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> list[SendResult]: ...

    async def send(
        self,
        notification: NotificationInput | Sequence[NotificationInput],
        *,
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None = None,
        stream_options: Any = None,
    ) -> SendResult | list[SendResult]:
        """sendNotificationSignal: one result per input (a list in, a list out).
        `stream_options` are the options of a run an immediate delivery wakes."""
        self.require_store()  # (FAILED_PRECONDITION before any check, with no store)
        single = isinstance(notification, NotificationInput)
        inputs = [notification] if isinstance(notification, NotificationInput) else list(notification)
        violations: list[FieldViolation] = []
        for name, given in (("agent_id", agent_id), ("resource_id", resource_id), ("thread_id", thread_id)):
            if not given:
                violations.append(FieldViolation(name, "required"))
        checked: list[NotificationInput] = []
        for i, value in enumerate(inputs):
            try:
                checked.append(validate_input(value, path="notification" if single else f"notifications[{i}]"))
            except InvalidArgument as exc:
                violations.extend(exc.violations)
        if violations:
            raise InvalidArgument.fields(violations)
        # Once its first record is written the send goes to its end though its
        # caller leaves: else a record could stay pending, never routed and
        # scheduled for no dispatcher pass.
        sending = self._send(checked, agent_id, resource_id, thread_id, route, thread_state, now, stream_options)
        results = await to_its_end(sending, f"a notification to thread {thread_id!r}")
        return results[0] if single else results

    async def _send(
        self,
        checked: list[NotificationInput],
        agent_id: str,
        resource_id: str,
        thread_id: str,
        route: Route,
        thread_state: ThreadStateFn,
        now: datetime | None,
        stream_options: Any,
    ) -> list[SendResult]:
        store = self.require_store()
        when = self.current_time(now)
        records = [
            await store.create(value, thread_id=thread_id, resource_id=resource_id, agent_id=agent_id, now=when)
            for value in checked
        ]
        state = check_state(await thread_state(resource_id, thread_id))
        policy = self.policy_for(agent_id)
        decisions = [await policy.decide(record, state, when) for record in records]
        results = []
        for record, decision in zip(records, decisions, strict=True):
            results.append(await self._apply(record, decision, thread_id, route, when, stream_options))
        return results

    async def _apply(
        self,
        record: NotificationRecord,
        decision: DeliveryDecision,
        thread_id: str,
        route: Route,
        now: datetime,
        stream_options: Any,
    ) -> SendResult:
        store = self.require_store()
        reason = decision.reason
        options = stream_options if stream_options is not None else decision.stream_options
        if decision.action == "discard":
            record = await store.update(
                thread_id, record.id, NotificationPatch(status="discarded", delivery_reason=reason), now=now
            )
            return SendResult(record, decision)
        if decision.action == "persist":
            record = await store.update(thread_id, record.id, NotificationPatch(delivery_reason=reason), now=now)
            return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
        if decision.action in ("defer", "summarize"):
            deliver_at = decision.deliver_at
            if decision.action == "summarize" and deliver_at is None:
                deliver_at = record.deliver_at
            summary_at = decision.summary_at
            # Only high emits a summary at once (with its full delivery kept for
            # later); medium and low wait to be batched by the dispatcher.
            emit = (
                decision.action == "summarize"
                and summary_at is not None
                and summary_at <= now
                and record.priority == "high"
                and deliver_at is not None
            )
            record = await store.update(
                thread_id,
                record.id,
                NotificationPatch(
                    deliver_at=deliver_at, summary_at=None if emit else summary_at, delivery_reason=reason
                ),
                now=now,
            )
            if not emit:
                return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
            signal = summary_signal([record], now=now)
            try:
                routing = await route_record(route, record, signal, idle_behavior="persist", stream_options=options)
            except Exception as exc:
                record = await self.attempt_failed(record, describe(exc), now) or record
                return SendResult(record, decision, needs_dispatch=due_at(record) is not None)
            if routing.action in DELIVERED_ACTIONS:
                record = await store.update(
                    thread_id, record.id, NotificationPatch(summary_signal_id=signal.id), now=now
                )
            return SendResult(record, decision, signal, routing, needs_dispatch=due_at(record) is not None)
        # deliver, queue: the full notification, routed now.
        signal = notification_signal(replace(record, status="delivered", delivered_at=now), now=now)
        try:
            routing = await route_record(route, record, signal, idle_behavior="wake", stream_options=options)
        except Exception as exc:
            # Kept pending and scheduled now, so the dispatcher retries it (up
            # to max_attempts) instead of leaving it unscheduled forever.
            failed = await self.attempt_failed(
                record, describe(exc), now, NotificationPatch(delivery_reason=reason, deliver_at=now)
            )
            record = failed or record
            return SendResult(
                record, decision, needs_dispatch=due_at(record) is not None and record.status == "pending"
            )
        record = await store.update(thread_id, record.id, NotificationPatch(delivery_reason=reason), now=now)
        if routing.action in DELIVERED_ACTIONS:
            marked = await store.mark_delivered(thread_id, record.id, delivered_signal_id=signal.id, attempted_at=now)
            if marked is None:
                raise NotificationNotFound(thread_id, record.id)
            record = marked
        return SendResult(record, decision, signal, routing, needs_dispatch=due_at(record) is not None)

    async def attempt_failed(
        self,
        record: NotificationRecord,
        error: str,
        now: datetime,
        extra: NotificationPatch | None = None,
    ) -> NotificationRecord | None:
        """One more failed attempt; `failed` at max_attempts (a record already
        there is failed without counting). None when the record is gone."""
        store = self.require_store()
        current = await store.get(record.thread_id, record.id)
        if current is None:
            return None
        attempts = current.delivery_attempts
        if attempts < self.max_attempts:
            attempts += 1
        patch = replace(
            extra or NotificationPatch(),
            delivery_attempts=attempts,
            last_delivery_attempt_at=now,
            last_delivery_error=error,
        )
        if attempts >= self.max_attempts and current.status == "pending":
            patch = replace(patch, status="failed")
        try:
            return await store.update(record.thread_id, record.id, patch, now=now)
        except NotificationNotFound:
            return None

    # ------------------------------------------------------------ dispatch

    async def dispatch_due(
        self,
        now: datetime | None = None,
        *,
        route: Route,
        thread_state: ThreadStateFn,
        limit: int = 100,
        agent_id: str | None = None,
        resource_id: str | None = None,
    ) -> DispatchResult:
        """One dispatcher pass over the records due at `now` (run it
        periodically). Per thread: the state is read once; every record due for
        a full delivery is an item, and all summary-due records form one summary
        item; items go urgent first, then oldest first."""
        store = self.require_store()
        when = self.current_time(now)
        result = DispatchResult()
        due = await store.list_due(when, limit=limit, agent_id=agent_id, resource_id=resource_id)
        groups: dict[tuple[str, str, str], list[NotificationRecord]] = {}
        for record in due:
            if not record.agent_id or not record.resource_id:
                missing = "agent id" if not record.agent_id else "resource id"
                await self._fail(result, record, f"notification has no {missing}", when)
                continue
            groups.setdefault((record.agent_id, record.resource_id, record.thread_id), []).append(record)
        for (group_agent, group_resource, group_thread), records in groups.items():
            try:
                state = check_state(await thread_state(group_resource, group_thread))
            except Exception as exc:
                for record in records:
                    await self._fail(result, record, describe(exc), when)
                continue
            policy = self.policy_for(group_agent)
            plans: list[tuple[NotificationRecord, DeliveryDecision]] = []
            for record in records:
                decision = await self._dispatch_decision(policy, record, state, when)
                if decision.hold:
                    result.skipped.append(record)
                else:
                    plans.append((record, decision))
            summary_due = [p for p in plans if p[0].summary_at is not None and p[0].summary_at <= when]
            summarised = {id(p[0]) for p in summary_due}
            items = [_Item(r.priority, r.created_at, [(r, d)], False) for r, d in plans if id(r) not in summarised]
            if summary_due:
                summary_due.sort(key=lambda p: (PRIORITY_RANK[p[0].priority], p[0].created_at))
                top = summary_due[0][0].priority
                earliest = min(r.created_at for r, _ in summary_due)
                items.append(_Item(top, earliest, summary_due, True))
            items.sort(key=lambda item: (PRIORITY_RANK[item.priority], item.created_at))
            for item in items:
                if item.summary:
                    await self._dispatch_summary(result, item, state, route, when)
                else:
                    await self._dispatch_one(result, item.records[0], state, route, when)
        return result

    async def _dispatch_decision(
        self, policy: DeliveryPolicy, record: NotificationRecord, state: ThreadState, now: datetime
    ) -> DeliveryDecision:
        # At dispatch only stream_options and hold count; a failing policy means a bare wake.
        try:
            decision = await policy.decide(record, state, now)
        except Exception:
            return DeliveryDecision("deliver")
        return DeliveryDecision("deliver", stream_options=decision.stream_options, hold=decision.hold)

    async def _dispatch_summary(
        self,
        result: DispatchResult,
        item: _Item,
        state: ThreadState,
        route: Route,
        now: datetime,
    ) -> None:
        store = self.require_store()
        # Re-read: a record may have been seen or delivered since it was listed.
        records: list[tuple[NotificationRecord, DeliveryDecision]] = []
        for record, decision in item.records:
            current = await store.get(record.thread_id, record.id)
            if current is not None and current.status == "pending":
                records.append((current, decision))
        if not records:
            return
        first = records[0][0]
        signal = summary_signal([r for r, _ in records], len(records), now=now)
        everything_low = all(r.priority == "low" for r, _ in records)
        try:
            routed = route_record(
                route,
                first,
                signal,
                # All low: reach subscribers without waking the model loop.
                idle_behavior="persist" if everything_low else "wake",
                stream_options=records[0][1].stream_options,
            )
            accepted(await routed)
        except Exception as exc:
            raise_if_cancelling(exc)
            for record, _ in records:
                await self._fail(result, record, describe(exc), now)
            return
        result.signals.append(signal)
        for record, _ in records:
            try:
                updated = await store.update(
                    record.thread_id,
                    record.id,
                    NotificationPatch(summary_at=None, summary_signal_id=signal.id, last_delivery_attempt_at=now),
                    now=now,
                )
            except NotificationNotFound as exc:
                result.failed.append(DispatchFailure(record, str(exc)))
                continue
            result.summarized.append(updated)

    async def _dispatch_one(
        self,
        result: DispatchResult,
        plan: tuple[NotificationRecord, DeliveryDecision],
        state: ThreadState,
        route: Route,
        now: datetime,
    ) -> None:
        store = self.require_store()
        listed, decision = plan
        record = await store.get(listed.thread_id, listed.id)
        if record is None or record.status != "pending" or record.delivered_signal_id:
            return
        if not record.agent_id or not record.resource_id:
            await self._fail(result, record, "notification has no agent id or resource id", now)
            return
        if record.priority == "high" and record.summary_signal_id and state == "active":
            # Its summary already reached the running loop; the full text waits for idle.
            result.skipped.append(record)
            return
        signal = notification_signal(replace(record, status="delivered", delivered_at=now), now=now)
        try:
            accepted(
                await route_record(route, record, signal, idle_behavior="wake", stream_options=decision.stream_options)
            )
        except Exception as exc:
            raise_if_cancelling(exc)
            await self._fail(result, record, describe(exc), now)
            return
        result.signals.append(signal)
        marked = await store.mark_delivered(
            record.thread_id, record.id, delivered_signal_id=signal.id, attempted_at=now
        )
        if marked is None:
            result.failed.append(DispatchFailure(record, str(NotificationNotFound(record.thread_id, record.id))))
            return
        result.delivered.append(marked)

    async def _fail(self, result: DispatchResult, record: NotificationRecord, error: str, now: datetime) -> None:
        updated = await self.attempt_failed(record, error, now)
        result.failed.append(DispatchFailure(updated or record, error))
