"""How a Generate's run without a thread ends when its call does not: the
caller cancels, its own deadline or the server's default one passes, AbortRun
names it, the server shuts down. The run records why it ended, its work for
after the run is done, and the registry lets it go."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from agentd.runtime import Agent
from agentd.runtime.chunks import Abort, Chunk
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.processors.base import ProcessInputArgs, Processor, ProcessOutputStreamArgs
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import thread_service_pb2 as tpb
from agentd_proto.v1 import usage_pb2 as upb
from support.errors import rich_error
from support.processors import HeldAfterRun
from support.server import Running, ended, in_flight, left_once_ended, serving, start_server

SLOW = ExecutionOptions(provider_options={"local": {"delayMs": 30}})
LONG = " ".join(["w"] * 200)


class Closes(Processor):
    """Work for after the run (on_finish) that awaits: it must finish however the run ends."""

    id = "closes"

    def __init__(self) -> None:
        self.closed: list[str] = []

    def process_input(self, args: ProcessInputArgs) -> None:
        assert args.on_finish is not None
        run_id = args.run_id

        async def close() -> None:
            await asyncio.sleep(0)
            self.closed.append(run_id)

        args.on_finish(close)


@pytest.fixture
def closes() -> Closes:
    return Closes()


@pytest.fixture
async def running(closes: Closes) -> AsyncIterator[Running]:
    async with serving([Agent(id="slow", default_options=SLOW, input_processors=[closes])]) as running:
        yield running


async def test_a_cancelled_generate_ends_its_run_caller_cancelled(running: Running, closes: Closes) -> None:
    call = running.agents.Generate(apb.GenerateRequest(agent_id="slow", text=LONG))
    handle = await in_flight(running)
    call.cancel()
    result = await ended(running, handle)
    assert result.aborted == Abort("CALLER_CANCELLED", "the caller cancelled the call")
    assert closes.closed == [handle.run_id]
    # The server goes on answering.
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="slow", text="one two"))
    assert reply.text == "one two"


async def test_a_generate_past_its_deadline_ends_its_run_caller_cancelled(running: Running, closes: Closes) -> None:
    call = running.agents.Generate(apb.GenerateRequest(agent_id="slow", text=LONG), timeout=0.5)
    handle = await in_flight(running)
    with pytest.raises(grpc.aio.AioRpcError) as late:
        await call
    assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    result = await ended(running, handle)
    assert result.aborted == Abort("CALLER_CANCELLED", "the caller cancelled the call")
    assert closes.closed == [handle.run_id]


async def test_a_generate_past_the_default_deadline_ends_its_run_caller_cancelled(closes: Closes) -> None:
    agents = [Agent(id="slow", default_options=SLOW, input_processors=[closes])]
    running = await start_server(agents, default_deadline=0.5)
    try:
        call = running.agents.Generate(apb.GenerateRequest(agent_id="slow", text=LONG))
        handle = await in_flight(running)
        with pytest.raises(grpc.aio.AioRpcError) as late:
            await call
        assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert rich_error(late.value).reason == "DEFAULT_DEADLINE_EXCEEDED"
        result = await ended(running, handle)
        assert result.aborted == Abort("CALLER_CANCELLED", "the caller cancelled the call")
        assert closes.closed == [handle.run_id]
        # A call that ends in time under the default deadline is answered.
        reply = await running.agents.Generate(apb.GenerateRequest(agent_id="slow", text="one two"))
        assert reply.text == "one two"
    finally:
        await running.close()


async def test_a_generate_aborted_by_its_run_id_ends_aborted_and_says_so(running: Running, closes: Closes) -> None:
    call = running.agents.Generate(apb.GenerateRequest(agent_id="slow", text=LONG))
    handle = await in_flight(running)
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=handle.run_id))
    assert aborted.aborted
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    err = rich_error(info.value)
    assert (err.code, err.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ABORTED")
    result = await ended(running, handle)
    assert result.aborted == Abort("ABORTED", "aborted by request")
    assert closes.closed == [handle.run_id]


async def test_shutdown_ends_a_generate_unavailable(closes: Closes) -> None:
    running = await start_server([Agent(id="slow", default_options=SLOW, input_processors=[closes])])
    try:
        call = running.agents.Generate(apb.GenerateRequest(agent_id="slow", text=LONG))
        handle = await in_flight(running)
        await running.server.stop(grace=0)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call
        err = rich_error(info.value)
        assert (err.code, err.reason) == (grpc.StatusCode.UNAVAILABLE, "SERVER_SHUTDOWN")
        result = await handle.result()
        assert result.aborted is not None and result.aborted.reason == "SERVER_SHUTDOWN"
        assert closes.closed == [handle.run_id]
    finally:
        await running.close()


class TurnsCancellationIntoAnError(Processor):
    """An output-stream hook that waits on the run's first chunk and, cancelled
    there, raises an error of its own instead (cleanup that fails)."""

    id = "turns-cancellation-into-an-error"

    def __init__(self) -> None:
        self.waiting = asyncio.Event()

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        if self.waiting.is_set():
            return args.part
        self.waiting.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise RuntimeError("cleanup failed while cancelled") from None
        return args.part


async def test_a_cancelled_generate_ends_caller_cancelled_though_a_hook_turns_the_cancel_into_an_error() -> None:
    # (A stream hook's error is logged and its chunk passes: here that would
    # have let the run go on to its end without its caller.)
    converts = TurnsCancellationIntoAnError()
    async with serving([Agent(id="converts", output_processors=[converts])]) as running:
        call = running.agents.Generate(apb.GenerateRequest(agent_id="converts", text="one two"))
        await asyncio.wait_for(converts.waiting.wait(), 10)  # the run waits inside the hook
        handle = await in_flight(running)
        call.cancel()
        result = await ended(running, handle)
        assert result.aborted == Abort("CALLER_CANCELLED", "the caller cancelled the call")
        assert result.error is None


async def test_an_abort_once_the_run_ended_is_refused_and_the_result_stands() -> None:
    # The run has its result when its work for after it runs: AbortRun then
    # has nothing to abort, says so, and cuts that work short no more than
    # it changes the reply.
    held = HeldAfterRun()
    async with serving([Agent(id="held", input_processors=[held])]) as running:
        call = running.agents.Generate(apb.GenerateRequest(agent_id="held", text="one two three"))
        handle = await in_flight(running)
        await held.began()
        refused = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=handle.run_id))
        assert (refused.aborted, refused.run_id) == (False, "")
        held.release.set()
        reply = await call
        assert (reply.text, reply.finish_reason) == ("one two three", upb.FINISH_REASON_STOP)
        result = await ended(running, handle)
        assert result.aborted is None
        assert held.finished == [handle.run_id]


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_caller_that_leaves_once_its_run_ended_does_not_cut_the_work_after_it_short(stream: bool) -> None:
    # A Generate's run runs in its call's task, which grpc cancels as the
    # caller goes: that cancellation used to cut the work for after the run
    # short. A Stream's run has a task of its own.
    held = HeldAfterRun()
    async with serving([Agent(id="held", input_processors=[held])]) as running:
        handle = await left_once_ended(running, held, "held", stream=stream)
        held.release.set()
        result = await ended(running, handle)
        assert (result.text, result.aborted) == ("one two", None)
        assert held.finished == [handle.run_id]


class CleansUpBadly(Processor):
    """Two callbacks for after the run: the first waits for ever and, cut
    short, raises an error of its own (cleanup that fails) or returns as if
    nothing happened (`swallows`); the second notes it ran."""

    id = "cleans-up-badly"

    def __init__(self, swallows: bool) -> None:
        self.swallows = swallows
        self.ran: list[str] = []

    def process_input(self, args: ProcessInputArgs) -> None:
        assert args.on_finish is not None

        async def waits() -> None:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                if not self.swallows:
                    raise RuntimeError("cleanup failed") from None

        args.on_finish(waits)
        args.on_finish(lambda: self.ran.append(args.run_id))


@pytest.mark.parametrize("swallows", [False, True], ids=["turned-into-an-error", "swallowed"])
async def test_the_limit_on_a_runs_work_for_after_it_skips_the_rest_whatever_a_callback_makes_of_it(
    swallows: bool,
) -> None:
    # The limit's cancellation, turned into an error or swallowed, is still
    # the limit's: the callbacks after it do not run on past it without one.
    badly = CleansUpBadly(swallows)
    async with serving([Agent(id="badly", input_processors=[badly])]) as running:
        running.host.runs.on_finish_timeout = 0.2
        reply = await asyncio.wait_for(running.agents.Generate(apb.GenerateRequest(agent_id="badly", text="hi")), 10)
        assert reply.text == "hi"
        await asyncio.wait_for(running.host.runs.wait_finished(reply.run_id), 10)
        assert badly.ran == []
