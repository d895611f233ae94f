"""A cancelled run stays cancelled however the code it waits in takes the
cancellation: a hook, callback, tool, model, cache or filter that is
cancelled and raises an error of its own instead (cleanup that fails, a
library that wraps the cancellation) does not make the run go on (or fail,
or trip) without its caller where it would log that error and carry on.

Most tests run a thread-less Generate (its run in the call's task), wait
until the run waits inside the piece under test, cancel the call, and read
how the run ended; two are about its work for after it (on_finish). Stores
and the server's own loops: test_cancel_in_disguise_stores_rpc.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, Tool, Workflow
from agentd.runtime.agent import CALLER_CANCELLED
from agentd.runtime.cache import CacheError, InMemoryServerCache
from agentd.runtime.chunks import Abort, Chunk, Data, TextDelta
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelRequest
from agentd.runtime.models.router import register_provider
from agentd.runtime.options import StructuredOutput, ToolHooks
from agentd.runtime.processors.base import (
    HookArgs,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    Processor,
    ProcessorViolation,
    ProcessOutputStreamArgs,
)
from agentd.runtime.processors.builtins.moderation import ModerationProcessor
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd.runtime.processors.builtins.token_cost_control import TokenCostControl
from agentd.runtime.processors.builtins.tool_search import ToolSearchFilterArgs, ToolSearchProcessor
from agentd.runtime.response_keys import ResponseCacheKeyInputs
from agentd.runtime.run import RunHandle, RunResult
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.disguise import Disguise
from support.processors import HeldAfterRun
from support.runs import script
from support.server import ended, in_flight, left_once_ended, serving, start_server
from support.wire import drain
from support_models import FunctionModel

CALLED_THEN_DONE = [{"toolCalls": [{"id": "c1", "name": "slow", "args": {}}]}, {"text": "all done"}]


async def cancelled_while_waiting(
    disguise: Disguise,
    agents: Sequence[Agent],
    text: str = "one two three four five six",
    options: opb.ExecutionOptions | None = None,
    *,
    stream: bool = False,
    **server: Any,
) -> tuple[RunResult, RunHandle]:
    """The run of a Generate of the first agent, cancelled once it waits in
    `disguise`. `stream`: of a Stream (its run in a task of its own, which
    keeps its chunks: a Generate's keeps none)."""
    async with serving(agents, **server) as running:
        call: Any
        if stream:
            call = running.agents.Stream(apb.StreamRequest(agent_id=agents[0].id, text=text, options=options))
        else:
            call = running.agents.Generate(apb.GenerateRequest(agent_id=agents[0].id, text=text, options=options))
        await asyncio.wait_for(disguise.waiting.wait(), 10)
        handle = await in_flight(running)
        call.cancel()
        return await ended(running, handle), handle


def assert_caller_cancelled(result: RunResult) -> None:
    assert result.aborted == Abort(*CALLER_CANCELLED)
    assert result.error is None
    assert result.tripwire is None


# ------------------------------------------------------------ processor hooks


class BatchWaits(Processor):
    """A batching stream processor whose batch call waits (a remote processor's round trip)."""

    id = "batch-waits"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    async def prefetch_output_stream(self, payloads: list[ModelEvent], args: HookArgs) -> None:
        await self.disguise.wait()

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        return args.part


async def test_a_batch_call_that_turns_the_cancel_into_an_error_does_not_let_the_parts_go_on() -> None:
    disguise = Disguise()
    result, _ = await cancelled_while_waiting(disguise, [Agent(id="batches", output_processors=[BatchWaits(disguise)])])
    assert_caller_cancelled(result)


class ErrorHandlerWaits(Processor):
    id = "error-handler-waits"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    async def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
        await self.disguise.wait()


async def test_an_error_processor_that_turns_the_cancel_into_an_error_ends_the_run_cancelled_not_failed() -> None:
    disguise = Disguise()
    agent = Agent(
        id="fails",
        model="local/scripted",
        default_options=script({"error": {"message": "boom", "status": 500, "retryable": False}}),
        error_processors=[ErrorHandlerWaits(disguise)],
        error_processor_defaults=False,
    )
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)


class ReportsAndWaits(Processor):
    """Reports a finding without stopping the run; its on_violation waits."""

    id = "reports-and-waits"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    def process_input(self, args: ProcessInputArgs) -> None:
        args.report(ProcessorViolation(self.id, "noted"))

    async def on_violation(self, violation: ProcessorViolation) -> None:
        await self.disguise.wait()


async def test_an_on_violation_that_turns_the_cancel_into_an_error_does_not_let_the_run_go_on() -> None:
    disguise = Disguise()
    result, _ = await cancelled_while_waiting(
        disguise, [Agent(id="reports", input_processors=[ReportsAndWaits(disguise)])]
    )
    assert_caller_cancelled(result)


class InputWaits(Processor):
    id = "input-waits"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    async def process_input(self, args: ProcessInputArgs) -> None:
        await self.disguise.wait()


async def test_a_hook_whose_error_would_fail_the_run_ends_it_cancelled_when_the_error_is_the_cancel() -> None:
    disguise = Disguise()
    result, _ = await cancelled_while_waiting(disguise, [Agent(id="inputs", input_processors=[InputWaits(disguise)])])
    assert_caller_cancelled(result)


class SucceedsAndWaits(Processor):
    id = "succeeds-and-waits"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    def process_input(self, args: ProcessInputArgs) -> None:
        assert args.on_success is not None
        args.on_success(self.disguise.wait)


async def test_an_on_success_callback_that_turns_the_cancel_into_an_error_ends_the_run_cancelled() -> None:
    disguise = Disguise()
    agent = Agent(id="succeeds", input_processors=[SucceedsAndWaits(disguise)])
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.text == "one two three four five six"  # it had answered before its caller went


class FinishesTwice(Processor):
    """Two callbacks for after the run: the first fails on its own (no
    cancellation in it), the second records that it ran."""

    id = "finishes-twice"

    def __init__(self) -> None:
        self.finished: list[str] = []

    def process_input(self, args: ProcessInputArgs) -> None:
        assert args.on_finish is not None

        def fails() -> None:
            raise RuntimeError("cleanup failed")

        args.on_finish(fails)
        args.on_finish(lambda: self.finished.append(args.run_id))


class WaitsForTheCancel(Processor):
    id = "waits-for-the-cancel"

    def __init__(self, disguise: Disguise) -> None:
        self.disguise = disguise

    async def process_input(self, args: ProcessInputArgs) -> None:
        try:
            await self.disguise.wait()
        except RuntimeError:
            raise asyncio.CancelledError from None  # the cancellation as it came: the run ends on it


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_work_for_after_a_cancelled_run_that_fails_is_ignored_and_the_rest_still_runs(stream: bool) -> None:
    # The run's ending still holds the cancellation it ends on: a failure of
    # on_finish there is the callback's own, not a second cancellation.
    disguise, finishes = Disguise(), FinishesTwice()
    agent = Agent(id="finishes", input_processors=[finishes, WaitsForTheCancel(disguise)])
    result, handle = await cancelled_while_waiting(disguise, [agent], stream=stream)
    assert_caller_cancelled(result)
    assert finishes.finished == [handle.run_id]
    # A Stream's run ends on its abort chunk; a Generate's keeps no chunks.
    assert [c.type for c in handle.buffer.snapshot()][-1:] == (["abort"] if stream else [])


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_shutdown_while_a_runs_work_for_after_it_runs_cuts_that_short_and_the_result_stands(
    stream: bool,
) -> None:
    # (The cancellation used to leave the run's ending undone: its stream
    # never closed, and its result was lost.) An abort has nothing to abort
    # by then (AbortRun says so); shutdown, past its grace, cuts the work short.
    slowly = HeldAfterRun()
    running = await start_server([Agent(id="slowly", input_processors=[slowly])])
    try:
        if stream:
            call: Any = running.agents.Stream(apb.StreamRequest(agent_id="slowly", text="one two"))
            answered = asyncio.ensure_future(drain(call))
        else:
            answered = asyncio.ensure_future(
                running.agents.Generate(apb.GenerateRequest(agent_id="slowly", text="one two"))
            )
        await slowly.began()
        handle = await in_flight(running)
        refused = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=handle.run_id))
        assert not refused.aborted
        await running.server.stop(grace=0)
        answer = await asyncio.wait_for(answered, 10)
        result = await asyncio.wait_for(handle.result(), 10)
    finally:
        await running.close()
    if stream:
        assert answer[-1].WhichOneof("payload") == "finish"  # it had ended before the shutdown came
    else:
        assert answer.text == "one two"
    assert (result.text, result.finish_reason, result.aborted) == ("one two", "stop", None)


async def test_a_shutdown_after_a_generates_caller_left_still_cuts_the_work_after_its_run_short() -> None:
    # Its caller gone, the run waits for that work (it is not the caller's to
    # cut short); the server's own ending, past its grace, still cuts it.
    slowly = HeldAfterRun()
    running = await start_server([Agent(id="slowly", input_processors=[slowly])])
    try:
        handle = await left_once_ended(running, slowly, "slowly")
        await asyncio.wait_for(running.server.stop(grace=0), 10)
        result = await asyncio.wait_for(handle.result(), 10)
    finally:
        await running.close()
    assert (result.text, result.finish_reason, result.aborted) == ("one two", "stop", None)
    assert slowly.finished == []


# ------------------------------------------------------------ tools


async def test_a_tool_that_turns_the_cancel_into_its_failure_does_not_let_the_run_call_its_model_again() -> None:
    disguise = Disguise()
    agent = Agent(
        id="tools",
        model="local/scripted",
        tools=[Tool("slow", "Waits", disguise.wait)],
        default_options=script(*CALLED_THEN_DONE),
    )
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.text == ""  # the model was not called again with the tool's "failure"


async def test_an_after_tool_call_hook_that_turns_the_cancel_into_an_error_ends_the_run_cancelled() -> None:
    disguise = Disguise()
    agent = Agent(
        id="hooked",
        model="local/scripted",
        tools=[Tool("slow", "Answers at once", lambda args: "ok")],
        hooks=ToolHooks(after_tool_call=disguise.wait),
        default_options=script(*CALLED_THEN_DONE),
    )
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.text == ""


@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_workflow_step_that_turns_the_cancel_into_its_failure_says_the_workflow_was_aborted(
    stream: bool,
) -> None:
    disguise = Disguise()
    agent = Agent(
        id="flows",
        model="local/scripted",
        workflows=[Workflow("flow", [Tool("slow", "Waits", disguise.wait)])],
        default_options=script({"toolCalls": [{"id": "c1", "name": "flow", "args": {}}]}, {"text": "all done"}),
    )
    result, handle = await cancelled_while_waiting(disguise, [agent], stream=stream)
    assert_caller_cancelled(result)
    finished = [
        c.payload.data
        for c in handle.buffer.snapshot()
        if isinstance(c.payload, Data) and c.payload.type == "data-workflow-finish"
    ]
    # Said in a Stream's chunks; a Generate's keeps none.
    assert finished == ([{"workflowId": "flow", "status": "aborted"}] if stream else [])


async def test_a_tool_search_filter_that_turns_the_cancel_into_an_error_does_not_hide_the_tool_and_go_on() -> None:
    disguise = Disguise()

    async def waits(args: ToolSearchFilterArgs) -> bool:
        await disguise.wait()
        return True

    search = ToolSearchProcessor(
        [Tool("get_weather", "Get the current weather forecast for a city", lambda a: "sunny")], filter=waits
    )
    agent = Agent(
        id="searches",
        model="local/scripted",
        input_processors=[search],
        default_options=script(
            {"toolCalls": [{"id": "s1", "name": "search_tools", "args": {"query": "weather"}}]}, {"text": "done"}
        ),
    )
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)


# ------------------------------------------------------------ models


def disguised_model(provider: str, disguise: Disguise) -> None:
    """`<provider>/...`: a model whose SDK turns the cancellation of its call into an API error."""

    async def reply(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
        await disguise.wait()
        yield TextDelta("late")

    register_provider(provider, lambda model_id: FunctionModel(reply, provider=provider, model_id=model_id))


async def test_a_model_that_turns_the_cancel_into_an_api_error_is_not_retried_on_a_fallback() -> None:
    disguise = Disguise(ModelAPIError("connection reset", status_code=503, retryable=True))
    disguised_model("disguised-model", disguise)
    agent = Agent(
        id="falls-back", model="disguised-model/main", fallback_models=["local/echo"], error_processor_defaults=False
    )
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.text == ""  # the fallback never answered


async def test_a_structuring_model_that_turns_the_cancel_into_an_api_error_gives_no_fallback_object() -> None:
    disguise = Disguise(ModelAPIError("connection reset", status_code=503))
    disguised_model("disguised-structurer", disguise)
    structured = StructuredOutput(
        {"type": "object"}, error_strategy="fallback", fallback_value={"late": True}, model="disguised-structurer/s"
    )
    agent = Agent(id="structured", default_options=ExecutionOptions(structured_output=structured))
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.object is None


@pytest.mark.parametrize(
    "error",
    [ModelAPIError("connection reset", status_code=503), OSError("connection reset")],
    ids=["api-error", "adapter-error"],
)
async def test_a_judge_that_turns_the_cancel_into_an_error_does_not_let_the_content_pass(error: Exception) -> None:
    disguise = Disguise(error)
    provider = f"disguised-judge-{type(error).__name__.lower()}"
    disguised_model(provider, disguise)
    agent = Agent(id="moderated", input_processors=[ModerationProcessor(model=f"{provider}/judge")])
    result, _ = await cancelled_while_waiting(disguise, [agent])
    assert_caller_cancelled(result)
    assert result.text == ""


class AsksItsOwnWay(ModerationProcessor):
    """A guardrail whose judge is asked some other way; cancelled, that way fails."""

    def __init__(self, disguise: Disguise) -> None:
        super().__init__(model="local/echo")
        self.disguise = disguise

    async def ask(self, system: str, prompt: str, schema: dict[str, Any], args: HookArgs, **_: Any) -> Any:
        await self.disguise.wait()


async def test_a_guardrail_that_turns_the_cancel_into_an_error_ends_the_run_cancelled_not_tripped() -> None:
    disguise = Disguise()
    result, _ = await cancelled_while_waiting(
        disguise, [Agent(id="guarded", input_processors=[AsksItsOwnWay(disguise)])]
    )
    assert_caller_cancelled(result)


async def test_a_cache_key_function_that_turns_the_cancel_into_an_error_does_not_let_the_model_be_called() -> None:
    disguise = Disguise()

    async def key(inputs: ResponseCacheKeyInputs) -> str:
        await disguise.wait()
        return "key"

    cache = InMemoryServerCache()
    agent = Agent(id="cached", input_processors=[ResponseCache(cache, key=key)])
    result, _ = await cancelled_while_waiting(disguise, [agent], caches={"memory": cache})
    assert_caller_cancelled(result)
    assert result.text == ""


# ------------------------------------------------------------ caches and storage


class DisguisedCache(InMemoryServerCache):
    """The in-memory cache, but its `method` (get, set or increment) waits once
    and, cancelled there, fails as a network backend's client may (redis-py
    inside asyncio.wait_for on Python 3.11)."""

    def __init__(self, disguise: Disguise, method: str) -> None:
        super().__init__()
        self.disguise = disguise
        self.method = method

    async def get(self, key: str) -> Any | None:
        if self.method == "get":
            await self.disguise.wait()
        return await super().get(key)

    async def set(self, key: str, value: Any, ttl: float | None = None, *, pinned: bool = False) -> None:
        if self.method == "set":
            await self.disguise.wait()
        await super().set(key, value, ttl, pinned=pinned)

    async def increment(self, key: str, by: int = 1, ttl: float | None = None) -> int:
        if self.method == "increment":
            await self.disguise.wait()
        return await super().increment(key, by, ttl)

    async def keys(self, prefix: str = "") -> list[str]:
        if self.method == "keys":
            await self.disguise.wait()
        return await super().keys(prefix)


@pytest.mark.parametrize("error", [CacheError("connection reset"), OSError("connection reset")], ids=["cache", "other"])
async def test_a_cache_read_that_turns_the_cancel_into_an_error_does_not_let_the_model_be_called(
    error: Exception,
) -> None:
    disguise = Disguise(error)
    cache = DisguisedCache(disguise, "get")
    agent = Agent(id="cached", input_processors=[ResponseCache(cache)])
    result, _ = await cancelled_while_waiting(disguise, [agent], caches={"memory": cache})
    assert_caller_cancelled(result)
    assert result.text == ""


@pytest.mark.parametrize("error", [CacheError("connection reset"), OSError("connection reset")], ids=["cache", "other"])
async def test_a_cache_write_that_turns_the_cancel_into_an_error_ends_the_run_cancelled(error: Exception) -> None:
    disguise = Disguise(error)
    cache = DisguisedCache(disguise, "set")
    agent = Agent(id="cached", input_processors=[ResponseCache(cache)])
    result, _ = await cancelled_while_waiting(disguise, [agent], caches={"memory": cache})
    assert_caller_cancelled(result)


@pytest.mark.parametrize(
    ("method", "options"),
    [
        ("get", {}),  # what was spent, read before the model call
        ("increment", {}),  # what the call spent, counted after it
        ("keys", {"window": "1h"}),  # a new window's first count prunes the old ones
        ("keys", {"max_tokens": 1, "include_breakdown": True}),  # the breakdown of a budget gone over
    ],
    ids=["read", "count", "prune", "breakdown"],
)
async def test_a_budget_that_turns_the_cancel_into_a_cache_error_does_not_let_the_run_go_on(
    method: str, options: dict[str, Any]
) -> None:
    disguise = Disguise(CacheError("connection reset"))
    cache = DisguisedCache(disguise, method)
    budget = TokenCostControl(cache, **{"max_tokens": 10_000, "scope": "user", **options})
    agent = Agent(
        id="budgeted",
        model="local/scripted",
        input_processors=[budget],
        output_processors=[budget],
        tools=[Tool("slow", "Answers at once", lambda args: "ok")],
        default_options=script(*CALLED_THEN_DONE),
    )
    request = opb.ExecutionOptions()
    request.request_context.update({"userId": "u1"})
    result, _ = await cancelled_while_waiting(disguise, [agent], options=request, caches={"memory": cache})
    assert_caller_cancelled(result)
