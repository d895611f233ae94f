"""Notifications alone, without a store: the delivery policy, durations,
rendering records as signals, and records as values. The store suite (every
backend) is tests/redis/test_notification_store.py; send, the dispatcher and
the inbox tool are tests/redis/test_notifications.py."""

from __future__ import annotations

import copy
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from agentd.runtime.durations import parse_duration
from agentd.runtime.messages import TextPart
from agentd.runtime.notifications import (
    DecisionInput,
    DeliveryDecision,
    DeliveryPolicy,
    NotificationRecord,
    PolicyRule,
    default_decision,
    notification_signal,
    summary_signal,
)
from agentd.runtime.signals import render_for_model
from support.notifications import AGENT, MINUTE, RESOURCE, T0, THREAD

# ================================================================ policy


@pytest.mark.parametrize(
    ("priority", "state", "action", "reason", "deliver_now", "summary_now"),
    [
        ("urgent", "active", "deliver", "urgent", False, False),
        ("urgent", "idle", "deliver", "urgent", False, False),
        ("high", "active", "summarize", "active-high-summary-then-full", True, True),
        ("high", "idle", "deliver", "idle-high", False, False),
        ("medium", "active", "summarize", "active-batch-summary", False, True),
        ("medium", "idle", "deliver", "idle-medium", False, False),
        ("low", "active", "summarize", "active-batch-summary", False, True),
        ("low", "idle", "summarize", "idle-low-summary", False, True),
    ],
)
async def test_default_policy_table(
    priority: str, state: str, action: str, reason: str, deliver_now: bool, summary_now: bool
) -> None:
    record = NotificationRecord("n", THREAD, "github", "ci", "s", priority=priority)  # type: ignore[arg-type]
    decision = await DeliveryPolicy().decide(record, state, T0)  # type: ignore[arg-type]
    assert (decision.action, decision.reason) == (action, reason)
    assert decision.deliver_at == (T0 if deliver_now else None)
    assert decision.summary_at == (T0 if summary_now else None)
    assert decision == default_decision(record, state, T0)  # type: ignore[arg-type]


async def test_policy_resolution_order() -> None:
    record = NotificationRecord("n", THREAD, "github", "ci", "s", priority="low")
    calls: list[DecisionInput] = []

    def decide(given: DecisionInput) -> Any:
        calls.append(given)
        return {"action": "discard", "reason": "decided"} if given.record.kind == "spam" else None

    policy = DeliveryPolicy(
        default="persist",
        priorities={"low": "defer"},
        sources={"github": {"action": "summarize", "after": "5m", "reason": "by-source"}},
        rules=[PolicyRule({"priority": "low"}, "deliver")],
        decide=decide,
    )
    assert (await policy.decide(replace(record, kind="spam"), "idle", T0)).reason == "decided"
    by_source = await policy.decide(record, "active", T0)
    assert (by_source.action, by_source.summary_at, by_source.reason) == ("summarize", T0 + 5 * MINUTE, "by-source")
    assert calls[-1].thread_state == "active" and calls[-1].now == T0 and calls[-1].record == record
    slack = replace(record, source="slack")
    assert (await policy.decide(slack, "idle", T0)).action == "defer"
    assert (await policy.decide(slack, "idle", T0)).deliver_at == T0  # a defer without a time is due now
    medium = replace(slack, priority="medium")
    assert (await policy.decide(medium, "idle", T0)).action == "persist"  # no rule for medium: the default
    rules_only = DeliveryPolicy(rules=[PolicyRule({"priority": "medium"}, "discard")])
    assert (await rules_only.decide(medium, "idle", T0)).action == "discard"
    assert (await rules_only.decide(record, "idle", T0)).reason == "idle-low-summary"  # built-in


async def test_async_decide_and_decision_objects() -> None:
    async def decide(given: DecisionInput) -> DeliveryDecision:
        return DeliveryDecision("defer", deliver_at=given.now + MINUTE, reason="later", stream_options={"max_steps": 2})

    decision = await DeliveryPolicy(decide=decide).decide(NotificationRecord("n", THREAD, "s", "k", "x"), "idle", T0)
    assert decision == DeliveryDecision("defer", T0 + MINUTE, None, "later", {"max_steps": 2})


async def test_sources_match_only_own_keys() -> None:
    policy = DeliveryPolicy(sources={"github": "discard"})
    for source in ("constructor", "toString", "__proto__", "__class__", "__init__", "get", "items", "hasOwnProperty"):
        record = NotificationRecord("n", THREAD, source, "k", "x", priority="urgent")
        decision = await policy.decide(record, "idle", T0)
        assert (decision.action, decision.reason) == ("deliver", "urgent"), source


async def test_rules_first_match_wins_and_after_sets_the_time() -> None:
    policy = DeliveryPolicy(
        rules=[
            PolicyRule({"source": ["email", "slack"], "thread_state": "active"}, "defer", after=timedelta(minutes=10)),
            PolicyRule({"priority": "low"}, "summarize", after=timedelta(minutes=30), reason="low-batch"),
            PolicyRule({}, "deliver", reason="everything-else"),
        ]
    )
    slack_low = NotificationRecord("n", THREAD, "slack", "mention", "x", priority="low")
    active = await policy.decide(slack_low, "active", T0)
    assert (active.action, active.deliver_at, active.summary_at) == ("defer", T0 + 10 * MINUTE, None)
    idle = await policy.decide(slack_low, "idle", T0)
    assert (idle.action, idle.summary_at, idle.reason) == ("summarize", T0 + 30 * MINUTE, "low-batch")
    other = await policy.decide(replace(slack_low, priority="high"), "idle", T0)
    assert (other.action, other.reason) == ("deliver", "everything-else")
    with pytest.raises(ValueError, match="unknown key"):
        PolicyRule({"colour": "red"}, "deliver")
    with pytest.raises(ValueError, match="priority"):
        PolicyRule({"priority": "huge"}, "deliver")
    with pytest.raises(ValueError, match="delay"):
        PolicyRule({}, "deliver", after=MINUTE)


async def test_policy_from_config() -> None:
    policy = DeliveryPolicy.from_config(
        {
            "priorities": {"urgent": "deliver", "medium": {"action": "summarize", "after": "2h", "reason": "m"}},
            "sources": {"ci": "defer"},
            "rules": [
                {"match": {"priority": "low"}, "action": "summarize", "after": "30m"},
                {"match": {"kind": ["mention", "dm"], "thread_state": "idle"}, "action": "persist"},
            ],
            "default": "discard",
        }
    )
    record = NotificationRecord("n", THREAD, "github", "ci-status", "x", priority="low")
    low = await policy.decide(record, "idle", T0)
    assert (low.action, low.summary_at) == ("summarize", T0 + 30 * MINUTE)
    medium = await policy.decide(replace(record, priority="medium"), "idle", T0)
    assert (medium.action, medium.summary_at, medium.reason) == ("summarize", T0 + 2 * timedelta(hours=1), "m")
    assert (await policy.decide(replace(record, source="ci"), "idle", T0)).action == "defer"
    mention = replace(record, priority="high", kind="mention")
    assert (await policy.decide(mention, "idle", T0)).action == "persist"
    assert (await policy.decide(mention, "active", T0)).action == "discard"  # rule needs idle: the default
    assert (await DeliveryPolicy.from_config({}).decide(mention, "idle", T0)).reason == "idle-high"

    for bad, message in (
        ({"defaults": "deliver"}, "unknown key"),
        ({"default": "shout"}, "default"),
        ({"priorities": {"critical": "deliver"}}, "priorities.critical"),
        ({"priorities": {"low": {"action": "deliver", "after": "5m"}}}, "delay"),
        ({"sources": {"ci": {"action": "defer", "after": "soon"}}}, "sources.ci.after"),
        ({"rules": [{"match": {"prio": "low"}, "action": "deliver"}]}, r"rules\[0\].match"),
        ({"rules": [{"match": {}, "action": "deliver", "when": 1}]}, r"rules\[0\]: unknown key"),
        ({"rules": "low"}, "rules"),
        ({"sources": {"ci": {"action": "defer", "stream_options": {}}}}, "unknown key"),
    ):
        with pytest.raises(ValueError, match=message):
            DeliveryPolicy.from_config(bad)


def test_parse_duration() -> None:
    assert parse_duration("30m") == timedelta(minutes=30)
    assert parse_duration("2h") == timedelta(hours=2)
    assert parse_duration("45s") == timedelta(seconds=45)
    assert parse_duration("1h30m") == timedelta(minutes=90)
    assert parse_duration("500ms") == timedelta(milliseconds=500)
    assert parse_duration(" 1D ") == timedelta(days=1)
    assert parse_duration(90) == timedelta(seconds=90)
    assert parse_duration(timedelta(minutes=3)) == timedelta(minutes=3)
    for bad in ("", "30", "m", "1w", "-5m", "1h 30x", True, -1):
        with pytest.raises(ValueError):
            parse_duration(bad)


# ================================================================ rendering


def test_notification_signal_attributes_and_metadata() -> None:
    record = NotificationRecord(
        "n-1",
        THREAD,
        "github",
        "ci-status",
        'CI failed: "3" tests <main> & more',
        priority="high",
        resource_id=RESOURCE,
        attributes=(("repo", "acme/app"), ("status", "caller's"), ("extra", {"k": [1]})),
        metadata={"url": "https://ci", "notification": "overwritten"},
        coalesced_count=1,
        delivered_at=T0,
    )
    signal = notification_signal(record, now=T0, id="sig-1")
    assert (signal.id, signal.type, signal.tag_name, signal.created_at) == ("sig-1", "notification", "notification", T0)
    assert signal.contents == record.summary
    assert signal.attributes == (
        ("repo", "acme/app"),
        ("status", "pending"),  # a reserved key keeps its place, takes the record's value
        ("extra", {"k": [1]}),
        ("id", "n-1"),
        ("source", "github"),
        ("type", "ci-status"),
        ("kind", "ci-status"),
        ("priority", "high"),
    )
    assert signal.metadata == {
        "url": "https://ci",
        "notification": {
            "signal": "notification",
            "recordId": "n-1",
            "source": "github",
            "kind": "ci-status",
            "priority": "high",
            "status": "pending",
            "coalescedCount": 1,
            "deliveredAt": "2024-05-06T07:08:09.123456Z",
        },
    }
    assert (signal.thread_id, signal.resource_id) == (THREAD, RESOURCE)
    text = render_for_model(signal).parts[0]
    assert isinstance(text, TextPart)
    assert text.text == (
        '<notification repo="acme/app" status="pending" extra="{&quot;k&quot;:[1]}" id="n-1" source="github" '
        'type="ci-status" kind="ci-status" priority="high">'
        'CI failed: "3" tests &lt;main&gt; &amp; more</notification>'
    )
    coalesced = notification_signal(replace(record, coalesced_count=3, attributes=()))
    assert dict(coalesced.attributes)["coalescedCount"] == 3


def test_summary_signal() -> None:
    records = [
        NotificationRecord("a", THREAD, "slack", "mention", "x", priority="low", resource_id=RESOURCE, agent_id=AGENT),
        NotificationRecord("b", THREAD, "github", "ci", "x", priority="high"),
        NotificationRecord("c", THREAD, "github", "review", "x", priority="medium", status="seen"),
    ]
    signal = summary_signal(records, now=T0)
    assert (signal.type, signal.tag_name, signal.contents) == (
        "notification",
        "notification-summary",
        "github: 2, slack: 1",
    )
    assert signal.attributes == (("pending", 2), ("priority", "high"))
    assert signal.metadata is not None
    assert signal.metadata["notification"] == {
        "signal": "summary",
        "pending": 2,
        "groups": [{"source": "github", "count": 2}, {"source": "slack", "count": 1}],
        "byPriority": {"high": 1, "medium": 1, "low": 1},
        "notificationIds": ["a", "b", "c"],
        "priority": "high",
    }
    assert signal.metadata["notificationIds"] == ["a", "b", "c"]
    assert signal.metadata["notificationSummary"]["agentId"] == AGENT
    assert (signal.thread_id, signal.resource_id) == (THREAD, RESOURCE)
    text = render_for_model(summary_signal(records, 3)).parts[0]
    assert isinstance(text, TextPart)
    assert text.text == '<notification-summary pending="3" priority="high">github: 2, slack: 1</notification-summary>'
    empty = summary_signal([])
    assert empty.contents == "No pending notifications." and empty.attributes == (("pending", 0),)


# ================================================================ records


def test_record_copies_are_independent() -> None:
    record = NotificationRecord("n", THREAD, "s", "k", "x", metadata={"a": [1]})
    clone = copy.deepcopy(record)
    assert clone == record and clone.metadata is not record.metadata
