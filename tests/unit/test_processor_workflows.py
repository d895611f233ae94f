"""Processor workflows: parallel branches run concurrently, each on its own copy,
in every phase a workflow takes part in; what a tripping or failing branch does."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentd.runtime import Agent, Message, TextPart
from agentd.runtime.processors.base import ProcessInputArgs, Processor
from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow

#: How long a branch waits for its sibling: the sequential runner fails after it.
MEET_TIMEOUT = 2.0

#: (hook, lane) for every phase a workflow runs in.
PHASES = [
    ("process_input", "input"),
    ("process_input_step", "input"),
    ("process_output_stream", "output"),
    ("process_output_step", "output"),
    ("process_output_result", "output"),
]


def rendezvous(hook: str, id: str, mine: asyncio.Event, other: asyncio.Event, met: dict[str, bool]) -> Processor:
    """A processor whose `hook` sets its own event and waits for its sibling's:
    it only meets the sibling when both run at the same time. `met[id]` says
    whether the first call met it (later chunks find the event long set)."""

    async def meet(self: Processor, args: Any) -> Any:
        mine.set()
        try:
            await asyncio.wait_for(other.wait(), MEET_TIMEOUT)
            met.setdefault(id, True)
        except TimeoutError:
            met.setdefault(id, False)
        return args.part if hook == "process_output_stream" else None

    cls = type(f"Rendezvous_{hook}_{id}", (Processor,), {"id": id, hook: meet})
    processor: Processor = cls()
    return processor


@pytest.mark.parametrize(("hook", "lane"), PHASES)
async def test_parallel_branches_run_concurrently(hook: str, lane: str) -> None:
    first, second = asyncio.Event(), asyncio.Event()
    met: dict[str, bool] = {}
    workflow = ProcessorWorkflow(
        "together",
        [
            ParallelStep([rendezvous(hook, "a", first, second, met), rendezvous(hook, "b", second, first, met)]),
            MapStep("processor:a"),
        ],
    )
    agent = Agent(id="a", **{f"{lane}_processors": [workflow]})  # type: ignore[arg-type]
    result = await asyncio.wait_for(agent.generate("hello"), 4 * MEET_TIMEOUT)
    assert result.error is None and result.text == "hello"
    assert met == {"a": True, "b": True}, f"{hook}: the branches ran one after the other"


class Trip(Processor):
    """Trips (or raises) after `delay` seconds; records that it finished."""

    def __init__(self, id: str, *, delay: float = 0.0, trip: bool = True, fail: bool = False) -> None:
        self.id, self.delay, self.trip, self.fail = id, delay, trip, fail
        self.finished = False

    async def process_input(self, args: ProcessInputArgs) -> None:
        await asyncio.sleep(self.delay)
        self.finished = True
        if self.fail:
            raise RuntimeError(f"{self.id} broke")
        if self.trip:
            args.abort(f"blocked by {self.id}")


def _pipeline(*branches: Processor) -> ProcessorWorkflow:
    return ProcessorWorkflow("w", [ParallelStep(list(branches)), MapStep(f"processor:{branches[0].id}")])


async def test_a_tripping_branch_waits_for_its_siblings_and_the_first_branch_in_order_decides() -> None:
    late, early = Trip("late", delay=0.05), Trip("early")
    result = await Agent(id="a", input_processors=[_pipeline(late, early)]).generate("x")
    # Both branches tripped; the one declared first wins even though it tripped last.
    assert result.tripwire is not None and result.tripwire.processor_id == "late"
    clean = Trip("clean", delay=0.05, trip=False)
    result = await Agent(id="a", input_processors=[_pipeline(Trip("trips"), clean)]).generate("x")
    assert result.tripwire is not None and result.tripwire.processor_id == "trips"
    assert clean.finished  # a sibling's tripwire does not cut a branch short


async def test_a_failing_branch_fails_the_run_like_a_plain_processor() -> None:
    result = await Agent(id="a", input_processors=[_pipeline(Trip("ok", trip=False), Trip("bad", fail=True))]).generate(
        "x"
    )
    assert result.error is not None and "bad broke" in result.error.message
    # Branch order decides between a failure and a tripwire too.
    result = await Agent(id="a", input_processors=[_pipeline(Trip("bad", fail=True), Trip("trips"))]).generate("x")
    assert result.tripwire is None and result.error is not None and "bad broke" in result.error.message


class Shout(Processor):
    id = "shout"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        return [Message(role=m.role, id=m.id, parts=[TextPart(m.text.upper())]) for m in args.messages]


class Peek(Processor):
    """Records what it sees: a branch never sees a sibling's changes."""

    id = "peek"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def process_input(self, args: ProcessInputArgs) -> None:
        await asyncio.sleep(0.01)  # Shout has changed its copy by now
        self.seen.extend(m.text for m in args.messages)


async def test_each_branch_works_on_its_own_copy() -> None:
    peek = Peek()
    workflow = ProcessorWorkflow("w", [ParallelStep([Shout(), peek]), MapStep("processor:shout")])
    result = await Agent(id="a", input_processors=[workflow]).generate("quiet")
    assert result.text == "QUIET" and peek.seen == ["quiet"]
    peek = Peek()
    workflow = ProcessorWorkflow("w", [ParallelStep([Shout(), peek]), MapStep("processor:peek")])
    assert (await Agent(id="a", input_processors=[workflow]).generate("quiet")).text == "quiet"
