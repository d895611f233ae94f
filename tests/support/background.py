"""Background tools in tests: tools the test controls (a gate the slow one
waits on, the chunks a subscription saw), agents that use them, and reading
the runs and the thread over gRPC."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from google.protobuf import json_format

from agentd.runtime import (
    Agent,
    ExecutionOptions,
    PayloadRule,
    Tool,
    ToolPayloadTransform,
    ToolPayloadTransformPolicy,
)
from agentd.runtime.background import BACKGROUND_SIGNAL_KEY
from agentd.runtime.memory import Memory
from agentd.runtime.processors.base import ProcessInputStepArgs, Processor, ProcessToolResultArgs
from agentd.runtime.processors.builtins.background_work_signal import BackgroundWorkSignal
from agentd.runtime.storage import Storage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until
from support.server import Running
from support.wire import scripted

WORK_EVENTS = {"work-deferred", "work-awaited", "work-completed", "work-failed"}


class World:
    """What the tools share with the test: a gate the slow tool waits on, and
    the chunks a subscription has seen so far."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.seen: list[Any] = []
        self.ran: list[str] = []
        #: Notifications a failing delivery was asked for.
        self.attempts: list[str] = []

    async def report(self, args: Any) -> dict[str, Any]:
        self.ran.append("report")
        if args.get("wait"):
            await self.gate.wait()
        return {"report": f"REPORT-{args.get('topic', 'x')}"}

    async def broken(self, args: Any) -> Any:
        self.ran.append("broken")
        raise RuntimeError("disk on fire")

    async def until_heard(self, args: Any) -> str:
        """A foreground tool that keeps its run going until the subscription saw the events named."""
        wanted = set(args["events"])
        await until(
            lambda: {s.signal.tag_name for s in signals(self.seen)},
            holds=wanted.issubset,
            what=f"the subscription to hear {sorted(wanted)}",
        )
        return "heard"

    async def open_gate(self, args: Any) -> str:
        """A foreground tool that lets the slow work finish, then keeps its run
        going until a (failing) delivery was tried for the work's end."""
        self.gate.set()
        await until(lambda: len(self.attempts) >= 2, what="a delivery tried for the work's end")
        return "tried"

    def tools(self) -> list[Tool]:
        return [
            Tool("report", "Write a report", self.report, background=True),
            Tool("broken", "Fails", self.broken, background=True),
            Tool("until_heard", "Waits", self.until_heard),
            Tool("quick", "Answers now", lambda a: "quick answer"),
            Tool("open_gate", "Opens the gate", self.open_gate),
        ]


CONTINUATION = ExecutionOptions(provider_options={"local": {"script": [{"text": "noted"}]}})


def agents(world: World, storage: Storage) -> list[Agent]:
    common: dict[str, Any] = {
        "model": "local/scripted",
        "tools": world.tools(),
        "memory": Memory(storage),
        "error_processor_defaults": False,
        "default_options": CONTINUATION,
    }
    hidden = ToolPayloadTransformPolicy(default=ToolPayloadTransform(result=PayloadRule(redact=["report"])))
    return [
        Agent(id="worker", input_processors=[BackgroundWorkSignal()], **common),
        Agent(id="plain", **common),
        Agent(id="secretive", tool_transform=hidden, **common),
        Agent(id="flaky", input_processors=[FailingSignals(world)], **common),
        Agent(id="vetted", output_processors=[VetReports()], **common),
    ]


class VetReports(Processor):
    """`process_tool_result`: a report's result is rewritten (as a guardrail rewrites what a tool returned)."""

    id = "vet-reports"

    def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        part = args.message_list.find_tool_result(args.tool_call_id)
        if part is not None and isinstance(part.result, dict) and "report" in part.result:
            part.result = {"report": "vetted", "step": args.step_number}


class FailingSignals(Processor):
    """Hands the background work a send_signal that always fails (a delivery that cannot be made)."""

    id = "failing-signals"

    def __init__(self, world: World) -> None:
        self.world = world

    def process_input_step(self, args: ProcessInputStepArgs) -> None:
        async def refuse(**signal: Any) -> Any:
            self.world.attempts.append(signal["tag_name"])
            raise RuntimeError("the signal could not be delivered")

        args.request_context[BACKGROUND_SIGNAL_KEY] = refuse


def options(*steps: dict[str, Any], thread: str = "t1", memory: bool = True) -> opb.ExecutionOptions:
    result = scripted(*steps)
    if memory:
        result.memory.CopyFrom(opb.MemoryOptions(resource="u1", thread_id=thread))
    return result


def calls(*entries: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {"toolCalls": [{"id": i, "name": n, "args": a} for i, n, a in entries]}


def signals(chunks: list[Any]) -> list[Any]:
    return [c.signal for c in chunks if c.WhichOneof("payload") == "signal"]


def tags(chunks: list[Any]) -> list[str]:
    return [s.signal.tag_name for s in signals(chunks)]


async def stream(running: Running, agent: str, opts: opb.ExecutionOptions) -> list[Any]:
    return [
        c
        async for r in running.agents.Stream(apb.StreamRequest(agent_id=agent, text="go", options=opts))
        for c in r.chunks
    ]


async def follow(running: Running, world: World, thread: str = "t1") -> asyncio.Task[None]:
    """Subscribes before anything runs; every chunk lands in `world.seen`."""
    sub = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=thread))
    await sub.read()  # the snapshot

    async def read() -> None:
        while True:
            response = await sub.read()
            if response is grpc.aio.EOF:
                return
            world.seen.extend(response.chunks.chunks)

    task = asyncio.create_task(read())
    task.add_done_callback(lambda _: sub.cancel())
    return task


def finishes(chunks: list[Any]) -> int:
    return sum(c.WhichOneof("payload") == "finish" for c in chunks)


async def stored_results(running: Running, thread: str = "t1") -> dict[str, Any]:
    listed = (await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id=thread))).messages
    return {
        p.tool_result.tool_call_id: (json_format.MessageToDict(p.tool_result.result), p.tool_result.is_error)
        for m in listed
        for p in m.parts
        if p.WhichOneof("part") == "tool_result"
    }
