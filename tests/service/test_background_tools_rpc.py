"""Background tools and `background-work-signal` over gRPC.

A background call answers at once with a deferred result; the run goes on or
ends while the work continues; its result is reconciled into the thread as
the call's result and a continuation run is woken on the thread. With the
processor, the calling run hears work-deferred (status running) as the work
starts and work-completed / work-failed once the result is reconciled, while
it still takes signals: a run that ended hears nothing (the result is kept,
nothing is retried), and a foreground call never sends them. The process
caps its background calls, and work a stopped server left unfinished is
reported failed when it starts again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from agentd import config
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime.storage import InMemoryStorage
from agentd.runtime.threads import ThreadSettings
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.background import (
    WORK_EVENTS,
    World,
    agents,
    calls,
    finishes,
    follow,
    options,
    signals,
    stored_results,
    stream,
    tags,
)
from support.polling import until
from support.runs import LocalModelSpy
from support.server import Running, start_server


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
async def server(world: World) -> AsyncIterator[Running]:
    storage = InMemoryStorage()
    running = await start_server(agents(world, storage), storage=storage)
    try:
        yield running
    finally:
        world.gate.set()
        await running.close()


async def test_a_background_call_answers_deferred_and_its_result_wakes_the_thread_after_the_run_ended(
    server: Running, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = LocalModelSpy(monkeypatch)
    following = await follow(server, world)
    chunks = await stream(
        server, "worker", options(calls(("c1", "report", {"wait": True, "topic": "q3"})), {"text": "started"})
    )

    # The call answered at once, deferred; the run went on and ended while the work runs.
    (result,) = [c.tool_result for c in chunks if c.WhichOneof("payload") == "tool_result"]
    deferred = json_format.MessageToDict(result.result)
    assert deferred["status"] == "running" and deferred["taskId"] and not result.is_error
    assert chunks[-1].WhichOneof("payload") == "finish" and not world.gate.is_set()
    # work-deferred, status running, as the work started (the run's own stream, and the thread's).
    (started,) = [s for s in signals(chunks) if s.signal.tag_name in WORK_EVENTS]
    assert started.signal.tag_name == "work-deferred" and started.signal.type == "notification"
    meta = json_format.MessageToDict(started.signal.metadata)
    assert meta["status"] == "running" and meta["originToolCallId"] == "c1" and meta["taskId"] == deferred["taskId"]
    assert meta["disposition"] == "deferred" and meta["originRunId"] == chunks[0].run_id
    assert await stored_results(server) == {"c1": (deferred, False)}

    world.gate.set()  # the work ends after its run did
    await until(lambda: finishes(world.seen) == 2, what="the continuation run to finish")
    following.cancel()
    # The thread's second run is the continuation, woken by the reconciled result.
    assert "background-task-completed" in tags(world.seen)
    # The run had ended: no work-completed, not later, not into the continuation (never rebuilt, never retried).
    assert [t for t in tags(world.seen) if t in WORK_EVENTS] == ["work-deferred"]
    # The result is kept: the stored call's result is the authoritative one, and the continuation's model saw it.
    assert await stored_results(server) == {"c1": ({"report": "REPORT-q3"}, False)}
    assert "REPORT-q3" in repr(spy.requests[-1].prompt)


async def test_a_live_run_hears_work_completed_and_work_failed_once_the_results_are_reconciled(
    server: Running, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = LocalModelSpy(monkeypatch)
    following = await follow(server, world)
    chunks = await stream(
        server,
        "worker",
        options(
            calls(
                ("c1", "report", {"topic": "live"}),
                ("c2", "broken", {}),
                ("c3", "until_heard", {"events": ["work-completed", "work-failed"]}),
            ),
            {"text": "both done"},
        ),
    )
    results = {c.tool_result.tool_call_id: c.tool_result for c in chunks if c.WhichOneof("payload") == "tool_result"}
    assert results["c3"].result.string_value == "heard"
    heard = {s.signal.tag_name: json_format.MessageToDict(s.signal.metadata) for s in signals(chunks)}
    assert heard["work-completed"]["status"] == "completed" and heard["work-completed"]["originToolCallId"] == "c1"
    assert heard["work-failed"]["status"] == "failed" and heard["work-failed"]["originToolCallId"] == "c2"
    # Reconciled before the notifications: the run's next model call sees the authoritative results.
    assert "REPORT-live" in repr(spy.requests[1].prompt) and "disk on fire" in repr(spy.requests[1].prompt)
    await until(lambda: finishes(world.seen) >= 2, what="the continuation runs to finish")
    following.cancel()
    stored = await stored_results(server)
    assert stored["c1"] == ({"report": "REPORT-live"}, False)
    assert stored["c2"] == ("disk on fire", True)
    # The calls' chunks keep what they answered then: a replay of the thread's log shows them deferred.
    probe = server.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id="t1"))
    epoch = (await probe.read()).snapshot.log_epoch
    probe.cancel()
    replay = server.threads.Subscribe(
        tpb.SubscribeRequest(resource_id="u1", thread_id="t1", resume=tpb.ResumePoint(log_epoch=epoch, after_offset=0))
    )
    replayed: list[Any] = []
    while not any(c.WhichOneof("payload") == "finish" for c in replayed):
        response = await replay.read()
        replayed.extend(response.chunks.chunks)
    replay.cancel()
    first = {c.tool_result.tool_call_id: c.tool_result for c in replayed if c.WhichOneof("payload") == "tool_result"}
    assert json_format.MessageToDict(first["c1"].result)["status"] == "running"


async def test_a_delivery_that_fails_is_never_retried_and_the_result_is_kept(server: Running, world: World) -> None:
    following = await follow(server, world)
    chunks = await stream(
        server,
        "flaky",
        options(calls(("c1", "report", {"wait": True, "topic": "kept"}), ("c2", "open_gate", {})), {"text": "ok"}),
    )
    results = {c.tool_result.tool_call_id: c.tool_result for c in chunks if c.WhichOneof("payload") == "tool_result"}
    assert results["c2"].result.string_value == "tried"
    assert chunks[-1].WhichOneof("payload") == "finish"  # the failures never reach the run
    await until(lambda: finishes(world.seen) == 2, what="the continuation run to finish")
    following.cancel()
    # One try at each, while the run took signals; nothing again, not into the continuation either.
    assert world.attempts == ["work-deferred", "work-completed"]
    assert not [t for t in tags(world.seen) if t in WORK_EVENTS]
    assert (await stored_results(server))["c1"] == ({"report": "REPORT-kept"}, False)
    assert "background-task-completed" in tags(world.seen)


async def test_a_step_with_a_background_call_still_running_is_not_replayed_from_the_response_cache(
    server: Running, world: World
) -> None:
    def cached(thread: str) -> opb.ExecutionOptions:
        opts = options(calls(("c1", "report", {"wait": True})), {"text": "ok"}, thread=thread)
        opts.input_processors.CopyFrom(
            opb.ProcessorList(processors=[opb.ProcessorRef(processor=opb.ProcessorSpec(name="response-cache"))])
        )
        return opts

    await stream(server, "plain", cached("t1"))
    second = await stream(server, "plain", cached("t2"))
    # A replay would have answered "running" for work that runs nowhere: the tool runs again instead.
    assert world.ran == ["report", "report"]
    (result,) = [c.tool_result for c in second if c.WhichOneof("payload") == "tool_result"]
    assert result.result.struct_value["taskId"] in {
        t.task_id for t in await server.host.storage.list_background_tasks()
    }


async def test_foreground_calls_never_send_work_notifications(server: Running, world: World) -> None:
    # A foreground tool, with the processor on.
    chunks = await stream(server, "worker", options(calls(("c1", "quick", {})), {"text": "ok"}))
    # A background tool in a run without a thread runs in the foreground: nothing detached to report.
    unbound = await stream(server, "worker", options(calls(("c2", "report", {})), {"text": "ok"}, memory=False))
    for run in (chunks, unbound):
        assert not [t for t in tags(run) if t in WORK_EVENTS]
    (inline,) = [c.tool_result for c in unbound if c.WhichOneof("payload") == "tool_result"]
    assert json_format.MessageToDict(inline.result) == {"report": "REPORT-x"}


async def test_without_the_processor_the_work_still_runs_and_reconciles_silently(server: Running, world: World) -> None:
    following = await follow(server, world)
    chunks = await stream(server, "plain", options(calls(("c1", "report", {"topic": "quiet"})), {"text": "ok"}))
    await until(lambda: finishes(world.seen) == 2, what="the continuation run to finish")
    following.cancel()
    assert not [t for t in tags(chunks) + tags(world.seen) if t in WORK_EVENTS]
    assert "background-task-completed" in tags(world.seen)
    assert (await stored_results(server))["c1"] == ({"report": "REPORT-quiet"}, False)


async def test_a_reconciled_result_is_shown_through_the_agents_payload_transform(
    server: Running, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = LocalModelSpy(monkeypatch)
    following = await follow(server, world)
    await stream(server, "secretive", options(calls(("c1", "report", {"topic": "hush"})), {"text": "ok"}))
    await until(lambda: finishes(world.seen) == 2, what="the continuation run to finish")
    following.cancel()
    assert (await stored_results(server))["c1"] == ({"report": "[REDACTED]"}, False)
    assert "REPORT-hush" not in "".join(json_format.MessageToJson(c) for c in world.seen)
    assert "REPORT-hush" in repr(spy.requests[-1].prompt)  # the continuation's model has the real result


@pytest.mark.parametrize("wait", [True, False])
async def test_a_background_result_goes_through_process_tool_result_as_a_foreground_one_does(
    server: Running, world: World, monkeypatch: pytest.MonkeyPatch, wait: bool
) -> None:
    """Whether the run ended before the work did (wait) or still calls the model,
    the result reconciled, stored and shown to the next model call is the
    processors' rewrite, never the tool's raw answer."""
    spy = LocalModelSpy(monkeypatch)
    following = await follow(server, world)
    steps = [calls(("c1", "report", {"topic": "raw", "wait": wait}))]
    if not wait:  # the run keeps calling the model until it has heard the work end
        steps.append(calls(("c2", "until_heard", {"events": ["background-task-completed"]})))
    await stream(server, "vetted", options(*steps, {"text": "ok"}))
    world.gate.set()
    await until(lambda: finishes(world.seen) >= 2, what="the continuation run to finish")
    following.cancel()
    assert (await stored_results(server))["c1"] == ({"report": "vetted", "step": 0}, False)
    assert "REPORT-raw" not in repr([r.prompt for r in spy.requests])


async def test_the_process_caps_its_background_calls(world: World) -> None:
    storage = InMemoryStorage()
    running = await start_server(
        agents(world, storage), storage=storage, thread_settings=ThreadSettings(max_background_jobs=1)
    )
    try:
        chunks = await stream(
            running,
            "worker",
            options(calls(("c1", "report", {"wait": True}), ("c2", "report", {"wait": True})), {"text": "ok"}),
        )
        results = {
            c.tool_result.tool_call_id: c.tool_result for c in chunks if c.WhichOneof("payload") == "tool_result"
        }
        assert json_format.MessageToDict(results["c1"].result)["status"] == "running"
        assert results["c2"].is_error and "1 background calls are running" in results["c2"].result.string_value
        assert world.ran == ["report"]  # the refused call never ran
        assert len(running.host.background) == 1
    finally:
        world.gate.set()
        await running.close()


def test_the_cap_is_configured_in_agentd_toml(tmp_path: Path) -> None:
    path = tmp_path / "agentd.toml"
    path.write_text("[threads]\nmax_background_jobs = 2\n")
    assert config.load(path, env={}).thread_settings.max_background_jobs == 2


async def test_work_a_stopped_server_left_unfinished_is_reported_failed_when_it_starts_again(
    tmp_path: Path, world: World
) -> None:
    path = tmp_path / "agentd.db"
    first_storage = SQLiteStorage(path)
    first = await start_server(agents(world, first_storage), storage=first_storage)
    try:
        chunks = await stream(first, "worker", options(calls(("c1", "report", {"wait": True})), {"text": "started"}))
        assert chunks[-1].WhichOneof("payload") == "finish"
        assert len(first.host.background) == 1
    finally:
        await first.close()  # the work never finished
    second_storage = SQLiteStorage(path)
    second = await start_server(agents(world, second_storage), storage=second_storage)
    try:
        result, is_error = (await stored_results(second))["c1"]  # reconciled as the server started
        assert is_error and "stopped before the background work finished" in result
        assert await second_storage.list_background_tasks() == []

        # The thread was woken with the failure, not left waiting.
        async def woken() -> bool:
            listed = (await second.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"))).messages
            return any(p.signal.signal.tag_name == "background-task-failed" for m in listed for p in m.parts)

        await until(woken, what="the thread woken with the failure")
    finally:
        await second.close()
