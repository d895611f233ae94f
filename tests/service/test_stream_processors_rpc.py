"""process_output_stream chains over gRPC: sync and async hooks side by side,
emit_after from the last processor, a drop in the middle, data-* chunks only
for processors that opt in, a failing hook passing the chunk unchanged, a
block naming its processor, a reported violation, what the args hold (a fresh
object per call, the live stream_parts list, one state per processor), and a
workflow between plain processors; with tracing on, the same rules and the
block on its processor's span."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentd.runtime import Agent
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.processors.base import Processor, ProcessorViolation, ProcessOutputStreamArgs
from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow
from agentd_proto.v1 import agent_service_pb2 as apb
from support.server import Running, serving, start_server


def text_of(chunk: Chunk) -> str | None:
    return chunk.payload.text if isinstance(chunk.payload, TextDelta) else None


def with_text(chunk: Chunk, text: str) -> Chunk:
    return Chunk(dataclasses.replace(chunk.payload, text=text), chunk.run_id, 0)


class Recorder(Processor):
    """Keeps every args object it was given."""

    def __init__(self, id: str, *, data_parts: bool = False) -> None:
        self.id = id
        self.process_data_parts = data_parts
        self.calls: list[ProcessOutputStreamArgs] = []

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        self.calls.append(args)
        return args.part

    def texts(self) -> list[str]:
        return [t for a in self.calls if (t := text_of(a.part)) is not None]

    def types(self) -> list[str]:
        return [a.part.type for a in self.calls]


class Upper(Processor):
    """A sync hook that replaces the chunk."""

    id = "upper"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        text = text_of(args.part)
        return args.part if text is None else with_text(args.part, text.upper())


class AsyncRecorder(Recorder):
    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:  # type: ignore[override]
        self.calls.append(args)
        return args.part


class Exclaim(Processor):
    """Queues a "!" after the first text delta (the "!" itself goes through the chain)."""

    id = "exclaim"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        if text_of(args.part) not in (None, "!") and not args.state.get("done"):
            args.state["done"] = True
            assert args.emit_after is not None
            args.emit_after(with_text(args.part, "!"))
        return args.part


class DropWord(Processor):
    id = "drop-word"

    def __init__(self, word: str) -> None:
        self.word = word

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        return None if self.word in (text_of(args.part) or "") else args.part


class Noter(Processor):
    """An async hook writing a data-* chunk on the first text delta."""

    id = "noter"

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        if text_of(args.part) is not None and not args.state.get("noted"):
            args.state["noted"] = True
            assert args.writer is not None
            await args.writer.custom("data-note", {"n": 1})
        return args.part


class Fails(Processor):
    """Raises on one word, answers something that is not a chunk on another."""

    id = "fails"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Any:
        text = text_of(args.part) or ""
        if "boom" in text:
            raise RuntimeError("boom")
        if "odd" in text:
            return 42
        return args.part


class AsyncFails(Processor):
    id = "async-fails"

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        if "bang" in (text_of(args.part) or ""):
            raise ValueError("bang")
        return args.part


class LaterAnswer(Processor):
    """A plain function that returns an awaitable: the runner awaits it."""

    id = "later"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Awaitable[Chunk]:
        return self._answer(args)

    async def _answer(self, args: ProcessOutputStreamArgs) -> Chunk:
        text = text_of(args.part)
        return args.part if text is None else with_text(args.part, text.replace("x", "y"))


class Blocker(Processor):
    id = "blocker"

    def __init__(self) -> None:
        self.violations: list[ProcessorViolation] = []

    async def on_violation(self, violation: ProcessorViolation) -> None:  # type: ignore[override]
        self.violations.append(violation)

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        if "stop" in (text_of(args.part) or ""):
            args.abort()
        return args.part


class Warner(Processor):
    """A sync hook reporting a violation without stopping the run."""

    id = "warner"

    def __init__(self) -> None:
        self.violations: list[str] = []

    def on_violation(self, violation: ProcessorViolation) -> None:  # type: ignore[override]
        self.violations.append(violation.message)

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        if "rude" in (text_of(args.part) or ""):
            args.report(ProcessorViolation(self.id, "rude word"))
        return args.part


class Suffix(Processor):
    def __init__(self, id: str, suffix: str, *, emit: bool = False) -> None:
        self.id, self.suffix, self.emit = id, suffix, emit

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        text = text_of(args.part)
        if text is None:
            return args.part
        if self.emit and text.startswith("ONE") and args.emit_after is not None:
            args.emit_after(with_text(args.part, "+"))
        return with_text(args.part, text + self.suffix)


@dataclasses.dataclass
class Served:
    running: Running
    #: Each agent's output processors, by agent id.
    lanes: dict[str, list[Any]]

    def processor(self, agent_id: str, index: int) -> Any:
        return self.lanes[agent_id][index]


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    workflow = ProcessorWorkflow(
        "pair",
        [ParallelStep([Suffix("left", "<"), Suffix("right", ">", emit=True)]), MapStep("processor:left")],
    )
    lanes: dict[str, list[Any]] = {
        "chain": [Upper(), AsyncRecorder("seen"), Exclaim()],
        "drop": [Recorder("before"), DropWord("secret"), Recorder("after")],
        "data": [Noter(), Recorder("blind"), Recorder("sees", data_parts=True)],
        "fails": [Fails(), AsyncFails(), Recorder("next")],
        "later": [LaterAnswer(), Recorder("after-later")],
        "blocked": [Recorder("first"), Blocker(), Recorder("third")],
        "kept": [Recorder("keeper")],
        "warned": [Warner(), Recorder("after-warner")],
        "mixed": [Upper(), workflow, Recorder("last")],
    }
    agents = [Agent(id=agent_id, output_processors=lane) for agent_id, lane in lanes.items()]
    async with serving(agents) as running:
        yield Served(running, lanes)


async def stream(served: Served, agent_id: str, text: str) -> list[Any]:
    call = served.running.agents.Stream(apb.StreamRequest(agent_id=agent_id, text=text))
    return [c async for m in call for c in m.chunks]


def wire_texts(chunks: list[Any]) -> list[str]:
    return [c.text_delta.text for c in chunks if c.HasField("text_delta")]


def joined(texts: list[str]) -> str:
    return "".join(texts).replace(" ", "")


async def test_sync_and_async_hooks_with_emit_after_from_the_third(served: Served) -> None:
    chunks = await stream(served, "chain", "one two")
    texts = wire_texts(chunks)
    assert joined(texts) == "ONE!TWO"
    first = next(i for i, t in enumerate(texts) if "ONE" in t)
    assert texts[first + 1] == "!"  # right after the chunk that queued it
    seen = served.processor("chain", 1)
    # The queued "!" went through the whole chain again: the (async) second processor saw it.
    assert joined(seen.texts()) == "ONE!TWO"
    assert chunks[-1].WhichOneof("payload") == "finish"


async def test_a_drop_in_the_middle_stops_the_chunk_there(served: Served) -> None:
    chunks = await stream(served, "drop", "a secret b")
    assert joined(wire_texts(chunks)) == "ab"
    before, after = served.processor("drop", 0), served.processor("drop", 2)
    assert joined(before.texts()) == "asecretb"
    assert joined(after.texts()) == "ab"
    assert all("secret" not in (text_of(p) or "") for p in after.calls[-1].stream_parts)


async def test_data_chunks_reach_only_the_processors_that_opt_in(served: Served) -> None:
    chunks = await stream(served, "data", "hello world")
    assert [c.data.type for c in chunks if c.HasField("data")] == ["data-note"]
    blind, sees = served.processor("data", 1), served.processor("data", 2)
    assert "data-note" not in blind.types()
    assert sees.types().count("data-note") == 1
    assert joined(blind.texts()) == joined(sees.texts()) == "helloworld"


async def test_a_failing_hook_passes_the_chunk_unchanged(served: Served, caplog: pytest.LogCaptureFixture) -> None:
    chunks = await stream(served, "fails", "boom odd bang fine")
    assert joined(wire_texts(chunks)) == "boomoddbangfine"
    assert joined(served.processor("fails", 2).texts()) == "boomoddbangfine"
    assert chunks[-1].WhichOneof("payload") == "finish"
    logged = [r.getMessage() for r in caplog.records if r.name == "agentd.processors"]
    assert any("'fails' failed" in m for m in logged)
    assert any("'fails' returned <class 'int'>" in m for m in logged)
    assert any("'async-fails' failed" in m for m in logged)


async def test_an_awaitable_from_a_plain_function_is_awaited(served: Served) -> None:
    chunks = await stream(served, "later", "xx ox")
    assert joined(wire_texts(chunks)) == "yyoy"
    assert joined(served.processor("later", 1).texts()) == "yyoy"


async def test_a_block_names_its_processor_and_stops_the_chain(served: Served) -> None:
    chunks = await stream(served, "blocked", "go stop now")
    kinds = [c.WhichOneof("payload") for c in chunks]
    assert kinds[-2:] == ["tripwire", "finish"]
    tripwire = chunks[-2].tripwire.tripwire
    assert (tripwire.processor_id, tripwire.reason) == ("blocker", "Stream part blocked by blocker")
    assert joined(wire_texts(chunks)) == "go"
    assert "stop" in joined(served.processor("blocked", 0).texts())
    assert "stop" not in joined(served.processor("blocked", 2).texts())
    blocker = served.processor("blocked", 1)
    assert [(v.processor_id, v.message) for v in blocker.violations] == [("blocker", "Stream part blocked by blocker")]


async def test_each_call_gets_its_own_args_with_the_live_stream_parts(served: Served) -> None:
    await stream(served, "kept", "a b c")
    calls = served.processor("kept", 0).calls
    assert len(calls) > 3 and len({id(a) for a in calls}) == len(calls)  # a processor may keep its args
    parts = calls[0].stream_parts
    assert all(a.stream_parts is parts for a in calls)  # the runner's one list, not a copy per chunk
    assert parts == [a.part for a in calls]
    assert all(a.state is calls[0].state for a in calls)
    assert {(a.retry_count, a.run_id) for a in calls} == {(0, calls[0].run_id)}
    assert all(a.message_list is calls[0].message_list is not None for a in calls)
    assert calls[0].emit_after is not None and calls[0].emit_after is not calls[1].emit_after


async def test_a_workflow_between_plain_processors(served: Served) -> None:
    chunks = await stream(served, "mixed", "one two")
    texts = wire_texts(chunks)
    # Upper, then the chosen branch's chunk ("<"); the other branch's queued "+"
    # follows and goes through the whole chain again.
    assert joined(texts) == "ONE<+<TWO<"
    assert joined(served.processor("mixed", 2).texts()) == "ONE<+<TWO<"


async def test_a_reported_violation_is_told_and_the_chunk_goes_on(served: Served) -> None:
    chunks = await stream(served, "warned", "a rude b rude")
    assert joined(wire_texts(chunks)) == "arudebrude"
    assert served.processor("warned", 0).violations == ["rude word", "rude word"]
    assert joined(served.processor("warned", 1).texts()) == "arudebrude"


async def test_traced_calls_follow_the_same_rules(caplog: pytest.LogCaptureFixture) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    lanes = {
        "blocked": [Recorder("first"), Blocker(), Recorder("third")],
        "fails": [Fails(), AsyncFails(), Recorder("next")],
    }
    agents = [Agent(id=agent_id, output_processors=lane) for agent_id, lane in lanes.items()]
    running = await start_server(agents, tracer_provider=provider)
    try:
        served = Served(running, lanes)
        chunks = await stream(served, "fails", "boom odd bang fine")
        assert joined(wire_texts(chunks)) == "boomoddbangfine"
        assert joined(served.processor("fails", 2).texts()) == "boomoddbangfine"
        chunks = await stream(served, "blocked", "go stop now")
        assert chunks[-2].tripwire.tripwire.processor_id == "blocker"
        assert "stop" not in joined(served.processor("blocked", 2).texts())
    finally:
        await running.close()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    blocker = spans["processor blocker"]
    assert dict(blocker.attributes or {})["agentd.tripwire"] is True
    reasons = [dict(e.attributes or {}) for e in blocker.events if e.name == "agentd.tripwire"]
    assert reasons == [{"agentd.tripwire.reason": "Stream part blocked by blocker"}]
    assert dict(spans["processor fails"].attributes or {})["agentd.processor.calls"] >= 4
    assert any("'async-fails' failed" in r.getMessage() for r in caplog.records)
