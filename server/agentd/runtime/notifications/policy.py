"""When each record reaches the model: `DeliveryPolicy.decide(record,
thread_state, now)` answers a `DeliveryDecision`: deliver now, summarize (now
or later), defer a full delivery, persist (inbox only), or discard.

Built-in policy (the original's, which wins over the spec's table: only high
priority emits an immediate summary on an active thread):

    priority  active thread                                  idle thread
    urgent    deliver (urgent)                               deliver (urgent)
    high      summary now, full delivery once idle           deliver (idle-high)
              (active-high-summary-then-full)
    medium    batched into a summary (active-batch-summary)  deliver (idle-medium)
    low       batched into a summary (active-batch-summary)  summary, persisted without
                                                             waking the model (idle-low-summary)
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, TypeAlias

from agentd.runtime.durations import parse_duration
from agentd.runtime.messages import aware
from agentd.runtime.notifications.record import PRIORITIES, NotificationRecord

DeliveryAction = Literal["deliver", "queue", "defer", "summarize", "persist", "discard"]
ThreadState = Literal["active", "idle"]

DELIVERY_ACTIONS: tuple[DeliveryAction, ...] = ("deliver", "queue", "defer", "summarize", "persist", "discard")
THREAD_STATES: tuple[ThreadState, ...] = ("active", "idle")


def check_state(value: object) -> ThreadState:
    if value not in THREAD_STATES:
        raise ValueError(f"thread state {value!r} is not active or idle")
    return value


@dataclass(frozen=True)
class DeliveryDecision:
    """What the delivery policy decided for a record, and when."""

    action: DeliveryAction
    #: When a full delivery is due (defer; high-active summary-then-full).
    deliver_at: datetime | None = None
    #: When a summary is due (summarize).
    summary_at: datetime | None = None
    #: E.g. "urgent", "idle-high", "active-batch-summary"; stored as delivery_reason.
    reason: str | None = None
    #: Execution options for a run a delivery wakes (opaque here).
    stream_options: Any = None
    #: At dispatch time: leave the record pending without counting an attempt.
    hold: bool = False


@dataclass(frozen=True)
class DecisionInput:
    """What `decide()` receives."""

    record: NotificationRecord
    thread_state: ThreadState
    now: datetime


#: A decision as a policy may write it: an action name, a DeliveryDecision, or
#: a mapping {action, deliver_at?, summary_at?, after?, reason?, stream_options?, hold?}
#: (`after`, a timedelta or "30m", sets summary_at (summarize) or deliver_at (defer) to now + after).
DecisionLike: TypeAlias = DeliveryDecision | str | Mapping[str, Any]
#: `decide(DecisionInput)`, sync or async; None (or any falsy answer) falls through to the tables.
Decider: TypeAlias = Callable[[DecisionInput], DecisionLike | Awaitable[DecisionLike | None] | None]


def _check_action(value: object, where: str) -> DeliveryAction:
    if value not in DELIVERY_ACTIONS:
        raise ValueError(f"{where}: {value!r} is not one of {', '.join(DELIVERY_ACTIONS)}")
    return value


@dataclass(frozen=True)
class _Entry:
    """A configured decision: `after`, relative to the time of each decision,
    sets its summary_at (summarize) or deliver_at (defer)."""

    decision: DeliveryDecision
    after: timedelta | None = None

    def resolve(self, now: datetime) -> DeliveryDecision:
        if self.after is None:
            return self.decision
        if self.decision.action == "summarize":
            return replace(self.decision, summary_at=now + self.after)
        return replace(self.decision, deliver_at=now + self.after)


_DECISION_KEYS = frozenset({"action", "after", "reason", "deliver_at", "summary_at", "stream_options", "hold"})


def _entry(value: object, where: str) -> _Entry:
    if isinstance(value, _Entry):
        return value
    if isinstance(value, str):
        return _Entry(DeliveryDecision(_check_action(value, where)))
    if isinstance(value, DeliveryDecision):
        _check_action(value.action, f"{where}.action")
        return _Entry(value)
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - _DECISION_KEYS)
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, unknown))}")
        if "action" not in value:
            raise ValueError(f"{where}: action is required")
        action = _check_action(value["action"], f"{where}.action")
        after = None
        if value.get("after") is not None:
            if action not in ("summarize", "defer"):
                raise ValueError(f"{where}.after: only summarize and defer take a delay")
            try:
                after = parse_duration(value["after"])
            except ValueError as exc:
                raise ValueError(f"{where}.after: {exc}") from None
        times = {}
        for name in ("deliver_at", "summary_at"):
            when = value.get(name)
            if when is not None and not isinstance(when, datetime):
                raise ValueError(f"{where}.{name}: must be a datetime")
            times[name] = aware(when) if when is not None else None
        reason = value.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValueError(f"{where}.reason: must be a string")
        decision = DeliveryDecision(
            action,
            times["deliver_at"],
            times["summary_at"],
            reason,
            value.get("stream_options"),
            bool(value.get("hold", False)),
        )
        return _Entry(decision, after)
    raise ValueError(f"{where}: an action name, a DeliveryDecision or a mapping with an action")


_MATCH_KEYS = ("priority", "source", "kind", "thread_state")


@dataclass(frozen=True)
class PolicyRule:
    """First matching rule wins. `match` keys: priority, source, kind,
    thread_state; a value is one string or a list of accepted strings; an empty
    match matches everything. `after` sets summary_at (summarize) or deliver_at
    (defer) to now + after."""

    match: Mapping[str, str | Sequence[str]]
    action: DeliveryAction
    after: timedelta | None = None
    reason: str | None = None

    def __post_init__(self) -> None:
        where = "rule"
        unknown = sorted(set(self.match) - set(_MATCH_KEYS))
        if unknown:
            raise ValueError(f"{where}.match: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(_MATCH_KEYS)})")
        for key, wanted in self.match.items():
            values = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            if not values or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{where}.match.{key}: a string or a non-empty list of strings")
            allowed = PRIORITIES if key == "priority" else THREAD_STATES if key == "thread_state" else None
            bad = [v for v in values if allowed is not None and v not in allowed]
            if bad:
                raise ValueError(f"{where}.match.{key}: {bad[0]!r} is not one of {', '.join(allowed or ())}")
        _check_action(self.action, f"{where}.action")
        if self.after is not None and self.action not in ("summarize", "defer"):
            raise ValueError(f"{where}.after: only summarize and defer take a delay")

    def matches(self, record: NotificationRecord, thread_state: ThreadState) -> bool:
        actual = {
            "priority": record.priority,
            "source": record.source,
            "kind": record.kind,
            "thread_state": thread_state,
        }
        for key, wanted in self.match.items():
            values = (wanted,) if isinstance(wanted, str) else tuple(wanted)
            if actual[key] not in values:
                return False
        return True

    def entry(self) -> _Entry:
        return _Entry(DeliveryDecision(self.action, reason=self.reason), self.after)


def default_decision(record: NotificationRecord, thread_state: ThreadState, now: datetime) -> DeliveryDecision:
    """The built-in table (see the module docstring)."""
    priority = record.priority
    if priority == "urgent":
        return DeliveryDecision("deliver", reason="urgent")
    if thread_state == "idle":
        if priority == "low":
            return DeliveryDecision("summarize", summary_at=now, reason="idle-low-summary")
        return DeliveryDecision("deliver", reason=f"idle-{priority}")
    if priority == "high":
        return DeliveryDecision("summarize", deliver_at=now, summary_at=now, reason="active-high-summary-then-full")
    return DeliveryDecision("summarize", summary_at=now, reason="active-batch-summary")


class DeliveryPolicy:
    """Decides each record. Resolution order: `decide()` (when it returns a
    decision) → `sources[record.source]` → `priorities[record.priority]` →
    the first matching `rules` entry → `default` → the built-in table.

    A summarize without summary_at summarises now; a defer without deliver_at
    is due now (the dispatcher's next pass)."""

    def __init__(
        self,
        default: DecisionLike | None = None,
        priorities: Mapping[str, DecisionLike] | None = None,
        sources: Mapping[str, DecisionLike] | None = None,
        rules: Sequence[PolicyRule] = (),
        decide: Decider | None = None,
    ) -> None:
        self.default = None if default is None else _entry(default, "default")
        self.priorities: dict[str, _Entry] = {}
        for key, value in (priorities or {}).items():
            if key not in PRIORITIES:
                raise ValueError(f"priorities.{key}: not a priority (use {', '.join(PRIORITIES)})")
            self.priorities[key] = _entry(value, f"priorities.{key}")
        # A plain dict copy: only the caller's own keys ever match (no
        # "constructor" or "__class__" through inheritance).
        self.sources: dict[str, _Entry] = {str(k): _entry(v, f"sources.{k}") for k, v in (sources or {}).items()}
        self.rules: tuple[PolicyRule, ...] = tuple(rules)
        for i, rule in enumerate(self.rules):
            if not isinstance(rule, PolicyRule):
                raise ValueError(f"rules[{i}]: must be a PolicyRule")
        self._decide = decide

    async def decide(self, record: NotificationRecord, thread_state: ThreadState, now: datetime) -> DeliveryDecision:
        state = check_state(thread_state)
        now = aware(now)
        decision: DeliveryDecision | None = None
        if self._decide is not None:
            answer: Any = self._decide(DecisionInput(copy.deepcopy(record), state, now))
            if inspect.isawaitable(answer):
                answer = await answer
            if answer:
                decision = _entry(answer, "decide()").resolve(now)
        if decision is None:
            entry = self.sources.get(record.source) or self.priorities.get(record.priority)
            if entry is None:
                entry = next((rule.entry() for rule in self.rules if rule.matches(record, state)), None)
            entry = entry or self.default
            decision = entry.resolve(now) if entry is not None else default_decision(record, state, now)
        if decision.action == "summarize" and decision.summary_at is None:
            decision = replace(decision, summary_at=now)
        elif decision.action == "defer" and decision.deliver_at is None:
            decision = replace(decision, deliver_at=now)
        return decision

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> DeliveryPolicy:
        """The agentd.toml form (ValueError names the offending key):

        [agents.support.notifications.delivery_policy]
        default = "deliver"
        priorities = { urgent = "deliver", low = { action = "summarize", after = "30m" } }
        sources = { ci = "defer" }
        rules = [ { match = { priority = "low", thread_state = "active" }, action = "summarize", after = "30m" } ]
        """
        if not isinstance(config, Mapping):
            raise ValueError("delivery_policy: must be a table")
        unknown = sorted(set(config) - {"default", "priorities", "sources", "rules"})
        if unknown:
            raise ValueError(
                f"delivery_policy: unknown key(s) {', '.join(map(str, unknown))} "
                "(allowed: default, priorities, rules, sources)"
            )
        tables = {}
        for name in ("priorities", "sources"):
            table = config.get(name) or {}
            if not isinstance(table, Mapping):
                raise ValueError(f"{name}: must be a table")
            tables[name] = {k: _config_entry(v, f"{name}.{k}") for k, v in table.items()}
        for key in tables["priorities"]:
            if key not in PRIORITIES:
                raise ValueError(f"priorities.{key}: not a priority (use {', '.join(PRIORITIES)})")
        raw_rules = config.get("rules") or []
        if not isinstance(raw_rules, Sequence) or isinstance(raw_rules, str):
            raise ValueError("rules: must be a list of tables")
        rules = []
        for i, raw in enumerate(raw_rules):
            where = f"rules[{i}]"
            if not isinstance(raw, Mapping):
                raise ValueError(f"{where}: must be a table with match, action and optional after, reason")
            extra = sorted(set(raw) - {"match", "action", "after", "reason"})
            if extra:
                raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, extra))}")
            match = raw.get("match") or {}
            if not isinstance(match, Mapping):
                raise ValueError(f"{where}.match: must be a table")
            entry = _config_entry({k: v for k, v in raw.items() if k != "match"}, where)
            try:
                rules.append(PolicyRule(dict(match), entry.decision.action, entry.after, entry.decision.reason))
            except ValueError as exc:
                raise ValueError(str(exc).replace("rule", where, 1)) from None
        default = config.get("default")
        policy = cls(rules=rules)
        policy.default = None if default is None else _config_entry(default, "default")
        policy.priorities = tables["priorities"]
        policy.sources = tables["sources"]
        return policy


def _config_entry(value: object, where: str) -> _Entry:
    if isinstance(value, Mapping):
        extra = sorted(set(value) - {"action", "after", "reason"})
        if extra:
            raise ValueError(f"{where}: unknown key(s) {', '.join(map(str, extra))} (allowed: action, after, reason)")
    elif not isinstance(value, str):
        raise ValueError(f"{where}: an action name or a table with action (and optional after, reason)")
    return _entry(value, where)
