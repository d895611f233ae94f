"""Notifications over a real server: the delivery policy against live threads."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.memory import Memory
from agentd.runtime.notifications import DeliveryPolicy
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.server import Running, serving

P = {
    "low": spb.NOTIFICATION_PRIORITY_LOW,
    "medium": spb.NOTIFICATION_PRIORITY_MEDIUM,
    "high": spb.NOTIFICATION_PRIORITY_HIGH,
    "urgent": spb.NOTIFICATION_PRIORITY_URGENT,
}


@pytest.fixture
async def live() -> AsyncIterator[Running]:
    storage = InMemoryStorage()
    thirty_minutes = DeliveryPolicy.from_config(
        {"rules": [{"match": {"source": "digest"}, "action": "summarize", "after": "30m"}]}
    )
    agents = [
        Agent(id="chat", memory=Memory(storage)),
        Agent(id="batched", memory=Memory(storage), delivery_policy=thirty_minutes),
    ]
    async with serving(agents, storage=storage) as running:
        yield running


async def notify(running: Running, priority: str, agent: str = "chat", **fields: Any) -> sspb.SendNotificationResponse:
    fields.setdefault("source", "github")
    fields.setdefault("kind", "ci-status")
    fields.setdefault("summary", f"{priority} news")
    return await running.signals.SendNotification(
        sspb.SendNotificationRequest(
            agent_id=agent,
            resource_id="u1",
            thread_id="t1",
            notification=spb.NotificationInput(priority=P[priority], **fields),
        )
    )


async def records(running: Running) -> list[spb.Notification]:
    return list((await running.signals.ListNotifications(sspb.ListNotificationsRequest(thread_id="t1"))).notifications)


async def test_urgent_on_an_idle_thread_wakes_a_run_and_is_delivered(live: Running, model_calls: list[Any]) -> None:
    reply = await notify(live, "urgent", summary="CI failed on main")
    assert reply.decision.action == spb.DELIVERY_ACTION_DELIVER and reply.decision.reason == "urgent"
    assert reply.routing.WhichOneof("action") == "wake" and reply.signal.tag_name == "notification"
    assert reply.notification.status == spb.NOTIFICATION_STATUS_DELIVERED
    await live.host.runs.wait_finished(reply.routing.wake.run_id)
    assert model_calls[-1][-1].startswith("<notification ") and "CI failed on main" in model_calls[-1][-1]


async def test_low_on_an_idle_thread_is_summarised_later_without_a_model_call(
    live: Running, model_calls: list[Any]
) -> None:
    stream = live.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1"))
    await stream.read()
    reply = await notify(live, "low", summary="a new star")
    assert reply.decision.action == spb.DELIVERY_ACTION_SUMMARIZE and reply.decision.reason == "idle-low-summary"
    assert not reply.HasField("routing")
    result = await live.host.dispatch_notifications(datetime.now(UTC) + timedelta(seconds=1))
    assert len(result.summarized) == 1
    mini_run = (await stream.read()).chunks.chunks
    assert [c.WhichOneof("payload") for c in mini_run] == ["start", "signal", "finish"]
    echo = mini_run[1].signal.signal
    assert (echo.tag_name, echo.text) == ("notification-summary", "github: 1")
    assert model_calls == []  # a low summary never wakes the agent
    assert (await records(live))[0].status == spb.NOTIFICATION_STATUS_PENDING  # a summary is lossy: still pending
    stream.cancel()


async def test_high_on_an_active_thread_summarises_now_then_delivers_when_idle(
    live: Running, model_calls: list[Any]
) -> None:
    options = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t1"))
    options.provider_options.update({"local": {"delayMs": 30}})
    call = live.agents.Stream(apb.StreamRequest(agent_id="chat", text=" ".join(["w"] * 20), options=options))
    run_id = (await call.read()).chunks[0].run_id
    reply = await notify(live, "high", summary="deploy finished")
    assert reply.decision.reason == "active-high-summary-then-full"
    assert reply.routing.deliver.run_id == run_id and reply.signal.tag_name == "notification-summary"
    while await call.read() is not grpc.aio.EOF:
        pass
    assert any("notification-summary" in text for text in model_calls[-1])  # the active run saw the summary
    assert (await records(live))[0].status == spb.NOTIFICATION_STATUS_PENDING
    result = await live.host.dispatch_notifications(datetime.now(UTC) + timedelta(seconds=1))
    assert [r.summary for r in result.delivered] == ["deploy finished"]
    assert (await records(live))[0].status == spb.NOTIFICATION_STATUS_DELIVERED


async def test_a_custom_rule_defers_by_thirty_minutes_on_the_injected_clock(
    live: Running, model_calls: list[Any]
) -> None:
    now = datetime.now(UTC)
    live.host.notifications.clock = lambda: now
    reply = await notify(live, "medium", agent="batched", source="digest", summary="weekly digest")
    assert reply.decision.action == spb.DELIVERY_ACTION_SUMMARIZE
    assert reply.decision.summary_time.ToDatetime(tzinfo=UTC) == now + timedelta(minutes=30)
    early = await live.host.dispatch_notifications(now + timedelta(minutes=29))
    assert not early.summarized and not early.delivered
    due = await live.host.dispatch_notifications(now + timedelta(minutes=31))
    assert len(due.summarized) == 1


async def test_dedupe_key_merges_pending_duplicates(live: Running) -> None:
    await notify(live, "low", summary="first", dedupe_key="ci:main")
    second = await notify(live, "low", summary="second", dedupe_key="ci:main")
    listed = await records(live)
    assert len(listed) == 1 and listed[0].summary == "second" and listed[0].coalesced_count == 2
    assert second.notification.id == listed[0].id


async def test_list_filters_and_status_updates(live: Running) -> None:
    low = await notify(live, "low", source="slack", kind="mention")
    await notify(live, "low", source="github")
    by_source = await live.signals.ListNotifications(sspb.ListNotificationsRequest(thread_id="t1", source="slack"))
    assert [n.id for n in by_source.notifications] == [low.notification.id]
    seen = await live.signals.UpdateNotificationStatus(
        sspb.UpdateNotificationStatusRequest(
            thread_id="t1", notification_id=low.notification.id, status=spb.NOTIFICATION_STATUS_SEEN
        )
    )
    assert seen.notification.status == spb.NOTIFICATION_STATUS_SEEN and seen.notification.HasField("seen_time")
    pending = await live.signals.ListNotifications(
        sspb.ListNotificationsRequest(thread_id="t1", statuses=[spb.NOTIFICATION_STATUS_PENDING])
    )
    assert [n.source for n in pending.notifications] == ["github"]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await live.signals.UpdateNotificationStatus(
            sspb.UpdateNotificationStatusRequest(
                thread_id="t1", notification_id="missing", status=spb.NOTIFICATION_STATUS_SEEN
            )
        )
    assert (info.value.code(), rich_error(info.value).reason) == (grpc.StatusCode.NOT_FOUND, "NOTIFICATION_NOT_FOUND")


@pytest.mark.parametrize(
    ("request_", "fields"),
    [
        (sspb.SendNotificationRequest(), {"agent_id", "resource_id", "thread_id"}),
        (
            sspb.UpdateNotificationStatusRequest(
                thread_id="t1", notification_id="x", status=spb.NOTIFICATION_STATUS_DELIVERED
            ),
            {"status"},
        ),
        (sspb.ListNotificationsRequest(), {"thread_id"}),
    ],
)
async def test_bad_notification_requests_name_their_fields(live: Running, request_: Any, fields: set[str]) -> None:
    method = {
        sspb.SendNotificationRequest: live.signals.SendNotification,
        sspb.UpdateNotificationStatusRequest: live.signals.UpdateNotificationStatus,
        sspb.ListNotificationsRequest: live.signals.ListNotifications,
    }[type(request_)]
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await method(request_)
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and fields <= set(err.violations)


async def test_a_send_cancelled_while_it_routes_still_ends_delivered_or_scheduled(live: Running) -> None:
    # The record exists before it is routed: a caller who gives up mid-route
    # (a deadline, a cancel) must not leave it pending and scheduled for
    # nothing, which no dispatcher pass would ever pick up.
    routing, release = asyncio.Event(), asyncio.Event()
    route = live.host.route_notification

    async def slow_route(*args: Any, **kwargs: Any) -> Any:
        routing.set()
        await release.wait()
        return await route(*args, **kwargs)

    live.host.route_notification = slow_route  # type: ignore[method-assign]
    call = asyncio.ensure_future(notify(live, "urgent", summary="CI failed on main"))
    await asyncio.wait_for(routing.wait(), 10)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    release.set()
    # The send goes on without its caller: the notification is delivered, its run woken.
    for _ in range(200):
        (record,) = await records(live)
        if record.status == spb.NOTIFICATION_STATUS_DELIVERED:
            break
        await asyncio.sleep(0.01)
    assert record.status == spb.NOTIFICATION_STATUS_DELIVERED
