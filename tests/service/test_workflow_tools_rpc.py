"""Workflows as tools over gRPC: declared in agentd.toml (linked to an --app
module's tools) or in Python, each combinator (sequence, parallel, branch),
nesting (a workflow step, an agent step), a failing step, an abort
mid-workflow, the nested chunks Stream and Subscribe carry, the spans, and
ListAgents / GetAgent showing the workflow tools."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agentd import config
from agentd.runtime import (
    Agent,
    Branch,
    ExecutionOptions,
    PayloadRule,
    Tool,
    ToolPayloadTransform,
    ToolPayloadTransformPolicy,
    Workflow,
)
from agentd.runtime.host import App
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.polling import until
from support.server import Running, serving, start_server
from support.wire import drain

README = Path(__file__).resolve().parents[2] / "README.md"

CONFIG = """
[storage]
backend = "memory"

[[agents]]
id = "desk"
model = "local/scripted"
memory = true
workflows = ["shout", "fan-out", "route", "outer", "fragile", "stalls"]

[[agents]]
id = "echoer"
model = "local/echo"

[[workflows]]
id = "shout"
description = "Upper-cases a text, then exclaims"
input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
steps = [ { tool = "upper" }, { tool = "exclaim" } ]

[[workflows]]
id = "fan-out"
steps = [ { parallel = [ { tool = "meet", id = "left" }, { tool = "meet", id = "right" } ] } ]

[[workflows]]
id = "route"
steps = [
  { tool = "measure" },
  { branch = [
      { when = { field = "length", gte = 5 }, step = { tool = "upper", id = "long" } },
      { when = { field = "length", lt = 5 }, step = { sequence = [ { tool = "exclaim", id = "short" } ] } },
  ] },
]

[[workflows]]
id = "outer"
steps = [ { workflow = "shout" }, { tool = "as-prompt" }, { agent = "echoer" } ]

[[workflows]]
id = "fragile"
steps = [ { tool = "upper" }, { tool = "explode" }, { tool = "record" } ]

[[workflows]]
id = "stalls"
steps = [ { tool = "stall" }, { tool = "record" } ]
"""


class Toolbox:
    """The --app module's tools, with what they saw."""

    def __init__(self) -> None:
        self.recorded: list[Any] = []
        self.stalled = asyncio.Event()
        self.stall_cancelled = False
        self.barrier = asyncio.Barrier(2)

    def tools(self) -> list[Tool]:
        async def meet(args: Any) -> str:
            # Both parallel steps must be running at once to pass the barrier.
            await asyncio.wait_for(self.barrier.wait(), 10)
            return "met"

        async def stall(args: Any) -> Any:
            self.stalled.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.stall_cancelled = True
                raise

        def explode(args: Any) -> Any:
            raise RuntimeError("kaboom")

        def record(args: Any) -> str:
            self.recorded.append(args)
            return "recorded"

        return [
            Tool("upper", "Upper-cases text", lambda a: {"text": a["text"].upper()}),
            Tool("exclaim", "Exclaims", lambda a: {"text": a["text"] + "!"}),
            Tool("measure", "Measures text", lambda a: {"length": len(a["text"]), "text": a["text"]}),
            Tool("as-prompt", "Text as a prompt", lambda a: {"prompt": a["text"]}),
            Tool("meet", "Waits for its twin", meet),
            Tool("stall", "Never ends", stall),
            Tool("explode", "Fails", explode),
            Tool("record", "Records its input", record),
        ]


def python_agents(box: Toolbox) -> list[Agent]:
    """A workflow in Python: a branch on a Python condition."""
    tools = {t.name: t for t in box.tools()}
    pick = Workflow(
        "pick",
        [Branch([(lambda out: out["text"].startswith("a"), tools["upper"]), (lambda out: True, tools["exclaim"])])],
        input_schema={"type": "object", "required": ["text"]},
    )
    # An agent step whose agent calls a tool that never ends.
    sleeper = Agent(
        id="sleeper",
        model="local/scripted",
        tools=[tools["stall"]],
        default_options=ExecutionOptions(
            provider_options={"local": {"script": [{"toolCalls": [{"id": "s1", "name": "stall", "args": {}}]}]}}
        ),
    )
    nap = Workflow("nap", [sleeper, tools["record"]])
    return [Agent(id="py-desk", model="local/scripted", workflows=[pick, nap]), sleeper]


@pytest.fixture
def box() -> Toolbox:
    return Toolbox()


async def serve(tmp_path: Path, box: Toolbox, **kwargs: Any) -> Running:
    path = tmp_path / "agentd.toml"
    path.write_text(CONFIG)
    cfg = config.load(path, env={}, app=App(tools=box.tools()))
    return await start_server([*cfg.agents, *python_agents(box)], storage=cfg.storage, **kwargs)


@pytest.fixture
async def running(tmp_path: Path, box: Toolbox) -> AsyncIterator[Running]:
    served = await serve(tmp_path, box)
    try:
        yield served
    finally:
        await served.close()


def calling(tool: str, args: Any, **memory: str) -> opb.ExecutionOptions:
    """The scripted model calls `tool` once, then answers "done"."""
    options = opb.ExecutionOptions()
    script = [{"toolCalls": [{"id": "c1", "name": tool, "args": args}]}, {"text": "done"}]
    options.provider_options.update({"local": {"script": script}})
    if memory:
        options.memory.CopyFrom(opb.MemoryOptions(**memory))
    return options


async def stream(running: Running, tool: str, args: Any, agent: str = "desk") -> list[cpb.Chunk]:
    request = apb.StreamRequest(agent_id=agent, text="go", options=calling(tool, args))
    return [c async for m in running.agents.Stream(request) for c in m.chunks]


def result_of(chunks: list[cpb.Chunk]) -> tuple[Any, bool]:
    """The workflow tool call's result (in the calling run)."""
    outer = chunks[0].run_id
    (found,) = [c for c in chunks if c.run_id == outer and c.HasField("tool_result")]
    return json_format.MessageToDict(found.tool_result.result), found.tool_result.is_error


def data(chunk: cpb.Chunk) -> Any:
    return json_format.MessageToDict(chunk.data.data)


def workflow_events(chunks: list[cpb.Chunk], run_id: str | None = None) -> list[tuple[str, Any]]:
    """(type, data) of the workflow chunks (of one workflow run, when given)."""
    return [
        (c.data.type.removeprefix("data-workflow-"), data(c))
        for c in chunks
        if c.source == cpb.CHUNK_SOURCE_WORKFLOW and (run_id is None or c.run_id == run_id)
    ]


async def test_a_sequence_passes_each_output_to_the_next_step(running: Running) -> None:
    chunks = await stream(running, "shout", {"text": "hello"})
    assert result_of(chunks) == ({"text": "HELLO!"}, False)
    outer = chunks[0].run_id
    flow = [c for c in chunks if c.source == cpb.CHUNK_SOURCE_WORKFLOW]
    assert {c.parent_run_id for c in flow} == {outer} and len({c.run_id for c in flow}) == 1
    assert [c.seq for c in flow] == list(range(1, len(flow) + 1))  # its own run, its own seq
    assert dict(flow[0].metadata) == {"workflowId": "shout", "toolCallId": "c1"}
    events = workflow_events(chunks)
    assert [(kind, d.get("stepId"), d.get("status")) for kind, d in events] == [
        ("start", None, None),
        ("step-start", "upper", None),
        ("step-result", "upper", "success"),
        ("step-start", "exclaim", None),
        ("step-result", "exclaim", "success"),
        ("finish", None, "success"),
    ]
    assert events[3][1]["input"] == {"text": "HELLO"} and events[-1][1]["output"] == {"text": "HELLO!"}
    # The workflow's chunks come inside the tool call: after its call, before its result.
    kinds = [c.WhichOneof("payload") for c in chunks if c.run_id == outer]
    first, last = chunks.index(flow[0]), chunks.index(flow[-1])
    assert chunks[first - 1].HasField("tool_call") and chunks[last + 1].HasField("tool_result")
    assert kinds[-1] == "finish"


async def test_the_input_schema_is_the_tools_and_a_mismatch_is_an_error_result(running: Running) -> None:
    result, is_error = result_of(await stream(running, "shout", {"words": 3}))
    assert is_error and "input schema" in result and "'text' is a required property" in result


async def test_parallel_steps_run_side_by_side_and_answer_by_step_id(running: Running) -> None:
    chunks = await stream(running, "fan-out", {})
    assert result_of(chunks) == ({"left": "met", "right": "met"}, False)


async def test_a_branch_runs_the_case_whose_field_test_holds(running: Running) -> None:
    long = await stream(running, "route", {"text": "elephant"})
    assert result_of(long) == ({"long": {"text": "ELEPHANT"}}, False)
    short = await stream(running, "route", {"text": "ant"})
    assert result_of(short) == ({"sequence-1": {"text": "ant!"}}, False)
    ran = [d["stepId"] for kind, d in workflow_events(short) if kind == "step-start"]
    assert ran == ["measure", "short"]  # the other case never started


async def test_a_branch_on_a_python_condition(running: Running) -> None:
    assert result_of(await stream(running, "pick", {"text": "apple"}, agent="py-desk")) == (
        {"upper": {"text": "APPLE"}, "exclaim": {"text": "apple!"}},  # every case that holds runs
        False,
    )
    assert result_of(await stream(running, "pick", {"text": "pear"}, agent="py-desk")) == (
        {"exclaim": {"text": "pear!"}},
        False,
    )


async def test_a_workflow_step_and_an_agent_step_nest_their_runs(running: Running) -> None:
    chunks = await stream(running, "outer", {"text": "hi there"})
    assert result_of(chunks) == ("HI THERE!", False)  # the echo agent said its prompt back
    outer_run = chunks[0].run_id
    events = workflow_events(chunks)
    outer_flow = next(c.run_id for c in chunks if c.source == cpb.CHUNK_SOURCE_WORKFLOW)
    starts = {d["stepId"]: d for kind, d in workflow_events(chunks, outer_flow) if kind == "step-start"}
    assert [(s, d["type"]) for s, d in starts.items()] == [
        ("shout", "workflow"),
        ("as-prompt", "tool"),
        ("echoer", "agent"),
    ]
    inner_flow, agent_run = starts["shout"]["runId"], starts["echoer"]["runId"]
    inner = [c for c in chunks if c.run_id == inner_flow]
    assert inner and {c.parent_run_id for c in inner} == {outer_flow}
    assert workflow_events(chunks, inner_flow)[-1] == (
        "finish",
        {"workflowId": "shout", "status": "success", "output": {"text": "HI THERE!"}},
    )
    nested_agent = [c for c in chunks if c.run_id == agent_run]
    assert nested_agent[0].start.agent_id == "echoer" and nested_agent[-1].HasField("finish")
    assert {c.parent_run_id for c in nested_agent} == {outer_flow}
    assert {c.parent_run_id for c in chunks if c.source == cpb.CHUNK_SOURCE_WORKFLOW and c.run_id == outer_flow} == {
        outer_run
    }
    assert events[-1][1]["status"] == "success"


async def test_a_failing_step_is_the_tools_error_and_no_later_step_runs(running: Running, box: Toolbox) -> None:
    chunks = await stream(running, "fragile", {"text": "x"})
    result, is_error = result_of(chunks)
    assert is_error and result == "workflow 'fragile' failed: step 'explode' failed: kaboom"
    assert box.recorded == []
    events = workflow_events(chunks)
    assert ("step-result", {"stepId": "explode", "type": "tool", "status": "failed", "error": "kaboom"}) in events
    assert events[-1] == (
        "finish",
        {"workflowId": "fragile", "status": "failed", "error": "step 'explode' failed: kaboom"},
    )
    assert chunks[-1].HasField("finish")  # the run goes on: the model saw the error and answered


async def test_an_abort_mid_workflow_stops_it_and_the_run_ends_aborted(running: Running, box: Toolbox) -> None:
    call = running.agents.Stream(apb.StreamRequest(agent_id="desk", text="go", options=calling("stalls", {})))
    chunks: list[cpb.Chunk] = []
    while not box.stalled.is_set():
        chunks.extend((await call.read()).chunks)
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=chunks[0].run_id))
    assert aborted.aborted
    chunks.extend(await drain(call))
    assert chunks[-1].abort.reason == "ABORTED"
    assert box.stall_cancelled and box.recorded == []  # the running step was cancelled, the next never ran
    events = workflow_events(chunks)
    assert events[-1] == ("finish", {"workflowId": "stalls", "status": "aborted"})
    assert not any(kind == "step-start" and d["stepId"] == "record" for kind, d in events)


async def test_an_abort_stops_an_agent_steps_run_too(running: Running, box: Toolbox) -> None:
    call = running.agents.Stream(apb.StreamRequest(agent_id="py-desk", text="go", options=calling("nap", {})))
    first = (await call.read()).chunks[0]
    await asyncio.wait_for(box.stalled.wait(), 10)  # the nested agent's tool is running
    assert (await running.threads.AbortRun(tpb.AbortRunRequest(run_id=first.run_id))).aborted
    chunks = await drain(call)
    assert chunks[-1].abort.reason == "ABORTED" and chunks[-1].run_id == first.run_id
    # The nested run was aborted with its caller, rather than left running unseen.
    await until(lambda: box.stall_cancelled, step=0.005, what="the nested run aborted")
    assert box.recorded == []


async def test_a_subscriber_sees_the_nested_chunks_as_the_caller_does(running: Running) -> None:
    subscription = running.threads.Subscribe(tpb.SubscribeRequest(thread_id="t1", resource_id="u1"))
    assert (await subscription.read()).HasField("snapshot")
    options = calling("outer", {"text": "hey"}, resource="u1", thread_id="t1")
    streamed = [
        c
        async for m in running.agents.Stream(apb.StreamRequest(agent_id="desk", text="go", options=options))
        for c in m.chunks
    ]
    seen: list[cpb.Chunk] = []
    while not any(c.HasField("finish") and c.run_id == streamed[0].run_id for c in seen):
        seen.extend((await subscription.read()).chunks.chunks)
    subscription.cancel()

    def shape(chunks: list[cpb.Chunk]) -> list[tuple[str, str, str, int]]:
        return [(c.run_id, c.parent_run_id, c.WhichOneof("payload") or "", c.source) for c in chunks]

    assert shape(seen) == shape(streamed)
    assert sum(c.source == cpb.CHUNK_SOURCE_WORKFLOW for c in seen) >= 10  # two workflow runs' chunks


async def test_list_and_get_agent_show_the_workflow_tools(running: Running) -> None:
    desk = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="desk"))).agent
    tools = {t.name: t for t in desk.tools}
    assert list(tools) == ["shout", "fan-out", "route", "outer", "fragile", "stalls"]
    assert tools["shout"].description == "Upper-cases a text, then exclaims"
    assert json_format.MessageToDict(tools["shout"].input_schema)["required"] == ["text"]
    listed = {a.id: a for a in (await running.agents.ListAgents(apb.ListAgentsRequest())).agents}
    assert [t.name for t in listed["py-desk"].tools] == ["pick", "nap"]


def only(spans: tuple[ReadableSpan, ...], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


async def test_workflow_spans_nest_under_the_tool_calls_span(tmp_path: Path, box: Toolbox) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    served = await serve(tmp_path, box, tracer_provider=provider)
    try:
        await stream(served, "outer", {"text": "hi"})
        await stream(served, "fragile", {"text": "x"})
    finally:
        await served.close()
    spans = exporter.get_finished_spans()

    def parent(span: ReadableSpan) -> ReadableSpan:
        assert span.parent is not None
        return next(s for s in spans if s.context.span_id == span.parent.span_id)

    outer = only(spans, "workflow outer")
    assert parent(outer).name == "execute_tool outer"
    assert parent(parent(outer)).name == "invoke_agent desk"
    assert dict(outer.attributes or {})["agentd.workflow.id"] == "outer"
    shout = only(spans, "workflow shout")
    assert parent(shout) is outer
    for tool in ("upper", "exclaim"):
        step = [s for s in spans if s.name == f"execute_tool {tool}" and parent(s) is shout]
        assert len(step) == 1 and dict(step[0].attributes or {})["agentd.workflow.step.id"] == tool
    assert parent(only(spans, "execute_tool as-prompt")) is outer
    assert parent(only(spans, "invoke_agent echoer")) is outer
    fragile = only(spans, "workflow fragile")
    assert fragile.status.status_code == StatusCode.ERROR
    assert only(spans, "execute_tool explode").status.status_code == StatusCode.ERROR


async def test_the_readmes_example_runs(tmp_path: Path) -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme.split("\n## Workflows as tools\n", 1)[1].split("\n## ", 1)[0]
    toml = section.split("```toml\n", 1)[1].split("```", 1)[0]
    # The example's models are real providers': the desk follows a script, the summarizer echoes.
    toml = toml.replace('model = "openai/gpt-4o-mini"', 'model = "local/scripted"', 1)
    toml = toml.replace('model = "openai/gpt-4o-mini"', 'model = "local/echo"')
    (tmp_path / "agentd.toml").write_text(toml)
    tools = [
        Tool("classify", "Classifies", lambda a: {"priority": 4 if "fire" in a["text"] else 1, "text": a["text"]}),
        Tool("lookup", "Looks up", lambda a: a),
        Tool("archive", "Archives", lambda a: "archived"),
        Tool("page-on-call", "Pages", lambda a: "paged"),
    ]
    cfg = config.load(tmp_path / "agentd.toml", env={}, app=App(tools=tools))
    served = await start_server(cfg.agents)
    try:
        chunks = await stream(served, "triage", {"text": "printer on fire"})
        assert result_of(chunks) == ({"escalate": "paged"}, False)
        summary = next(
            d for kind, d in workflow_events(chunks) if kind == "step-result" and d["stepId"] == "summarizer"
        )
        assert summary["output"] == '{"priority": 4, "text": "printer on fire"}'  # the echo agent's text
        chunks = await stream(served, "triage", {"text": "printer jammed"})
        assert result_of(chunks) == ({"archive": "archived"}, False)
    finally:
        await served.close()


async def test_workflows_resolved_per_request_run_and_a_cyclic_one_is_refused(box: Toolbox) -> None:
    tools = {t.name: t for t in box.tools()}
    looping = Workflow("looping")
    looping.steps = [looping]

    def per_request(context: dict[str, Any]) -> list[Workflow]:
        return [looping] if context.get("broken") else [Workflow("shout", [tools["upper"]])]

    agent = Agent(id="dyn", model="local/scripted", workflows=per_request)
    served = await start_server([agent])
    try:
        assert result_of(await stream(served, "shout", {"text": "a"}, agent="dyn")) == ({"text": "A"}, False)
        options = calling("looping", {})
        options.request_context.update({"broken": True})
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await served.agents.Generate(apb.GenerateRequest(agent_id="dyn", text="go", options=options))
        assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "workflow 'looping' runs itself" in (info.value.details() or "")
    finally:
        await served.close()


def transformed_agents() -> list[Agent]:
    """`login` hides its password and token itself; `vault`'s policy hides the `sealed` workflow's payloads."""
    login = Tool(
        "login",
        "Logs in",
        lambda a: {"user": a["user"], "token": "tok-" + a["password"]},
        transform=ToolPayloadTransform(args=PayloadRule(redact=["password"]), result=PayloadRule(redact=["token"])),
    )
    shown = Workflow("open", [login])
    sealed = Workflow("sealed", [Workflow("inner", [login])])
    policy = ToolPayloadTransformPolicy(
        tools={"sealed": ToolPayloadTransform(args=PayloadRule(redact=["password"]), result=PayloadRule(replace="ok"))}
    )
    return [Agent(id="vault", model="local/scripted", workflows=[shown, sealed], tool_transform=policy)]


async def vault_stream(workflow: str) -> list[cpb.Chunk]:
    """`vault` calls `workflow` with a password, on a server of its own."""
    async with serving(transformed_agents()) as running:
        return await stream(running, workflow, {"user": "ann", "password": "hunter2"}, agent="vault")


async def test_a_tool_steps_own_payload_rules_hold_in_the_workflows_chunks() -> None:
    chunks = await vault_stream("open")
    assert result_of(chunks) == ({"user": "ann", "token": "tok-hunter2"}, False)  # the model's, real
    events = dict((kind, d) for kind, d in workflow_events(chunks) if kind in ("step-start", "step-result"))
    assert events["step-start"]["input"] == {"user": "ann", "password": "[REDACTED]"}
    assert events["step-result"]["output"] == {"user": "ann", "token": "[REDACTED]"}


async def test_a_transformed_workflow_shows_its_payloads_by_its_rules_and_withholds_its_steps() -> None:
    chunks = await vault_stream("sealed")
    events = workflow_events(chunks)
    start = next(d for kind, d in events if kind == "start" and d["workflowId"] == "sealed")
    finish = next(d for kind, d in events if kind == "finish" and d["workflowId"] == "sealed")
    assert start["input"] == {"user": "ann", "password": "[REDACTED]"} and finish["output"] == "ok"
    # The steps' values derive from the hidden payloads: none is shown, the nested workflow's neither.
    steps = [d for kind, d in events if kind.startswith("step-")]
    assert steps and all("input" not in d and "output" not in d for d in steps)
    inner = [d for kind, d in events if kind in ("start", "finish") and d["workflowId"] == "inner"]
    assert inner and all("input" not in d and "output" not in d for d in inner)
    wire = "".join(json_format.MessageToJson(c) for c in chunks if c.source == cpb.CHUNK_SOURCE_WORKFLOW)
    assert "hunter2" not in wire
