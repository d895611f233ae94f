"""MCP servers as tool sources, over gRPC, against a real MCP server written
with the SDK's server side (tests/support/mcp_server.py), over stdio and over
streamable HTTP: the tools listed (GetAgent/ListAgents say where each comes
from, their schemas reach the model unchanged), called through runs (text,
images, structured content, error results), `list_changed`, a server that
dies mid-call (an error result, then a restart), a slow tool and the run's
abort, and the tool hooks and processors around MCP tools."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from agentd import config
from agentd.grpc.server import AgentdServer
from agentd.runtime import (
    Agent,
    App,
    Host,
    InMemoryStorage,
    McpServers,
    McpServerSpec,
    McpToolRef,
    McpToolSettings,
    Memory,
    Processor,
    ProcessToolResultArgs,
    Tool,
)
from agentd.runtime.mcp_tools.connection import Backoff
from agentd.runtime.options import ToolHooks
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.background import CONTINUATION, calls, stored_results
from support.background import options as background_options
from support.polling import until
from support.runs import LocalModelSpy
from support.server import Running, serving
from support.wire import drain, scripted

SERVER_SCRIPT = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
LISTED = {"add", "echo", "picture", "fail", "slow", "crash", "grow", "pid", "whoami", "files_read"}
#: The name each tool is listed under by the server, by the name models see.
LISTED_AS = {name: name for name in LISTED} | {"files_read": "files.read"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class HttpServer:
    """The test MCP server as a streamable HTTP process on a fixed port (restartable)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(SERVER_SCRIPT), "--http", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def http_server() -> Iterator[HttpServer]:
    server = HttpServer()
    server.start()
    yield server
    server.stop()


def spec_for(transport: str, http: HttpServer | None, **kwargs: Any) -> McpServerSpec:
    if transport == "stdio":
        return McpServerSpec(id="t", command=sys.executable, args=(str(SERVER_SCRIPT),), **kwargs)
    assert http is not None
    return McpServerSpec(id="t", url=http.url, headers={"Authorization": "Bearer test-token-0123456789"}, **kwargs)


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
async def mcp(transport: str, request: pytest.FixtureRequest) -> McpServers:
    http = request.getfixturevalue("http_server") if transport == "http" else None
    return McpServers([spec_for(transport, http)], backoff=Backoff(first=0.1, most=0.5))


def mcp_agent(mcp: McpServers, agent_id: str = "mcp", **kwargs: Any) -> Agent:
    return Agent(
        id=agent_id,
        model="local/scripted",
        tool_sources=[mcp.select([McpToolRef("t", "*")])],
        error_processor_defaults=False,
        **kwargs,
    )


@pytest.fixture
async def running(mcp: McpServers) -> AsyncIterator[Running]:
    async with serving([mcp_agent(mcp)], mcp=mcp) as running:
        await available(mcp)
        yield running


async def available(mcp: McpServers, generation: int = 0, server: str = "t") -> None:
    """Polls until `server` is connected (for a later connection than `generation`)."""
    connection = mcp.connections[server]
    await until(
        lambda: connection.available and connection.generation > generation,
        within=60,
        step=0.05,
        what=f"the MCP server {server!r} to connect",
    )


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


def script(*steps: dict[str, Any], processors: list[opb.ProcessorSpec] | None = None) -> opb.ExecutionOptions:
    options = scripted(*steps)
    if processors:
        refs = [opb.ProcessorRef(processor=p) for p in processors]
        options.input_processors.CopyFrom(opb.ProcessorList(processors=refs))
    return options


async def generate(running: Running, options: opb.ExecutionOptions, agent: str = "mcp") -> apb.GenerateResponse:
    reply: apb.GenerateResponse = await running.agents.Generate(
        apb.GenerateRequest(agent_id=agent, text="go", options=options)
    )
    return reply


def outcomes(reply: apb.GenerateResponse) -> list[tuple[str, Any, bool]]:
    return [(r.tool_name, json_format.MessageToDict(r.result), r.is_error) for r in reply.tool_results]


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> LocalModelSpy:
    return LocalModelSpy(monkeypatch)


async def test_tools_are_listed_with_their_source_and_reach_the_model_unchanged(
    running: Running, mcp: McpServers, spy: LocalModelSpy
) -> None:
    agent = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="mcp"))).agent
    assert {t.name for t in agent.tools} == LISTED
    assert {t.source for t in agent.tools} == {"mcp:t"}
    listed = {offered: t for t in mcp.connections["t"].tools for offered, by in LISTED_AS.items() if by == t.name}
    for info in agent.tools:
        assert json_format.MessageToDict(info.input_schema) == listed[info.name].input_schema
        assert info.description == listed[info.name].description
    listing = await running.agents.ListAgents(apb.ListAgentsRequest())
    assert {t.name for t in listing.agents[0].tools} == LISTED

    await generate(running, script({"text": "nothing to do"}))
    sent = {t.name: t.input_schema for t in spy.requests[0].tools}
    assert sent == {name: tool.input_schema for name, tool in listed.items()}


async def test_calls_through_a_run_map_text_images_structured_content_and_errors(running: Running) -> None:
    reply = await generate(
        running,
        script(
            {
                "toolCalls": [
                    call("add", {"a": 2, "b": 3}, "c1"),
                    call("echo", {"text": "hello"}, "c2"),
                    call("picture", {}, "c3"),
                    call("fail", {"reason": "on purpose"}, "c4"),
                ]
            },
            {"text": "done"},
        ),
    )
    (add, echo, picture, fail) = outcomes(reply)
    assert add == ("add", {"result": 5}, False)  # structured content
    assert echo == ("echo", "hello", False)  # one text block: its text
    assert picture == (
        "picture",
        [{"type": "image", "data": PIXEL, "mimeType": "image/png"}, {"type": "text", "text": "a pixel"}],
        False,
    )
    assert fail[0] == "fail" and fail[2] is True and "failed: on purpose" in fail[1]
    assert reply.text == "done"


async def test_list_changed_adds_the_new_tool_to_the_agent(running: Running) -> None:
    reply = await generate(running, script({"toolCalls": [call("grow", {"name": "sprout"}, "g")]}, {"text": "ok"}))
    assert outcomes(reply)[0][2] is False
    reply = await until(  # the listing is refreshed when the notification arrives
        lambda: running.agents.GetAgent(apb.GetAgentRequest(agent_id="mcp")),
        holds=lambda reply: "sprout" in {t.name for t in reply.agent.tools},
        within=30,
        step=0.05,
        what="list_changed to reach the agent",
    )
    agent = reply.agent
    (grown,) = [t for t in agent.tools if t.name == "sprout"]
    assert (grown.source, grown.description) == ("mcp:t", "A tool added at run time: sprout")
    reply = await generate(running, script({"toolCalls": [call("sprout", {}, "s")]}, {"text": "ok"}))
    assert outcomes(reply) == [("sprout", {"result": "I am sprout"}, False)]


async def test_a_server_that_dies_mid_call_answers_an_error_and_is_restarted(
    running: Running, mcp: McpServers, transport: str, request: pytest.FixtureRequest
) -> None:
    before = mcp.connections["t"].generation
    pid = outcomes(await generate(running, script({"toolCalls": [call("pid", {}, "p")]}, {"text": "ok"})))
    reply = await generate(
        running, script({"toolCalls": [call("crash", {}, "x"), call("add", {"a": 1, "b": 1}, "y")]}, {"text": "ok"})
    )
    (crash, add) = outcomes(reply)
    assert crash[0] == "crash" and crash[2] is True and "MCP server 't'" in crash[1]
    assert add[2] is True  # the server is gone: an error result, not a hung run
    assert reply.text == "ok"
    if transport == "http":  # a URL server is not agentd's to start: it comes back on its own
        http: HttpServer = request.getfixturevalue("http_server")
        assert http.process is not None
        http.process.wait(timeout=30)
        http.start()
    await available(mcp, before)
    again = outcomes(await generate(running, script({"toolCalls": [call("pid", {}, "p")]}, {"text": "ok"})))
    assert again[0][2] is False
    if transport == "stdio":
        assert again[0][1] != pid[0][1]  # a new process


@pytest.mark.parametrize("transport", ["stdio"])
async def test_while_the_server_is_down_its_tools_answer_an_error_at_once(transport: str) -> None:
    mcp = McpServers([spec_for(transport, None)], backoff=Backoff(first=600, most=600))  # no restart in the test
    async with serving([mcp_agent(mcp)], mcp=mcp) as running:
        await available(mcp)
        await generate(running, script({"toolCalls": [call("crash", {}, "x")]}, {"text": "ok"}))
        await until(lambda: not mcp.connections["t"].available, within=30, step=0.05, what="the crash noticed")
        reply = await generate(running, script({"toolCalls": [call("add", {"a": 1, "b": 2}, "y")]}, {"text": "ok"}))
        ((_name, text, is_error),) = outcomes(reply)
        assert is_error and "MCP server 't' is unavailable" in text
        agent = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="mcp"))).agent
        assert "add" in {t.name for t in agent.tools}  # still listed: the agent keeps its tools while it restarts


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_slow_tool_is_given_up_when_the_run_is_aborted(running: Running) -> None:
    stream = running.agents.Stream(
        apb.StreamRequest(
            agent_id="mcp",
            text="go",
            options=script({"toolCalls": [call("slow", {"seconds": 600}, "s")]}, {"text": "never"}),
        )
    )
    run_id = ""
    while True:  # until the model has called the tool
        message = await stream.read()
        assert message is not grpc.aio.EOF
        run_id = run_id or message.chunks[0].run_id
        if any(c.WhichOneof("payload") == "tool_call" for c in message.chunks):
            break
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
    assert aborted.aborted
    chunks = await drain(stream)
    assert chunks[-1].abort.reason == "ABORTED"
    reply = await generate(running, script({"toolCalls": [call("add", {"a": 4, "b": 4}, "a")]}, {"text": "ok"}))
    assert outcomes(reply) == [("add", {"result": 8}, False)]  # the connection outlived the aborted call


@pytest.mark.parametrize("transport", ["stdio"])
async def test_a_server_that_stops_answering_fails_its_calls_in_flight_and_is_restarted(transport: str) -> None:
    """A stopped (SIGSTOP) server answers nothing, not even pings: the call in
    flight answers an error once a ping goes unanswered, long before its own
    timeout, and the server is restarted."""
    mcp = McpServers(
        [spec_for(transport, None, timeout_seconds=600)],
        backoff=Backoff(first=0.1, most=0.5),
        ping_interval=0.2,
        ping_timeout=1.0,
    )
    async with serving([mcp_agent(mcp)], mcp=mcp) as running:
        await available(mcp)
        before = mcp.connections["t"].generation
        reply = await generate(running, script({"toolCalls": [call("pid", {}, "p")]}, {"text": "ok"}))
        pid = int(outcomes(reply)[0][1]["result"])
        os.kill(pid, signal.SIGSTOP)
        try:
            reply = await generate(running, script({"toolCalls": [call("echo", {"text": "hi"}, "e")]}, {"text": "ok"}))
        finally:
            os.kill(pid, signal.SIGCONT)
        ((_name, text, is_error),) = outcomes(reply)
        assert is_error and "MCP server 't'" in text
        await available(mcp, before)
        reply = await generate(running, script({"toolCalls": [call("echo", {"text": "back"}, "e")]}, {"text": "ok"}))
        assert outcomes(reply) == [("echo", "back", False)]


@pytest.mark.parametrize("transport", ["stdio"])
async def test_a_call_over_timeout_seconds_answers_an_error_and_keeps_the_connection(transport: str) -> None:
    mcp = McpServers([spec_for(transport, None, timeout_seconds=0.5)])
    async with serving([mcp_agent(mcp)], mcp=mcp) as running:
        await available(mcp)
        reply = await generate(
            running,
            script(
                {"toolCalls": [call("slow", {"seconds": 600}, "s"), call("add", {"a": 1, "b": 2}, "a")]}, {"text": "ok"}
            ),
        )
        slow, add = outcomes(reply)
        assert slow[2] is True and "timed out" in slow[1]
        assert add == ("add", {"result": 3}, False)
        assert mcp.connections["t"].generation == 1  # a slow tool is no dead server


@pytest.mark.parametrize("transport", ["stdio"])
async def test_mcp_tools_run_under_the_tool_hooks(mcp: McpServers) -> None:
    seen: list[tuple[str, str, Any, Any]] = []

    def before(ctx: Any) -> Any:
        seen.append(("before", ctx.tool_name, ctx.input, None))
        if ctx.tool_name == "echo":
            return {"proceed": False, "output": "blocked by the hook"}
        return None

    def after(ctx: Any) -> None:
        seen.append(("after", ctx.tool_name, ctx.output, str(ctx.error) if ctx.error else None))

    agent = mcp_agent(mcp, hooks=ToolHooks(before_tool_call=before, after_tool_call=after))
    async with serving([agent], mcp=mcp) as running:
        await available(mcp)
        reply = await generate(
            running,
            script(
                {
                    "toolCalls": [
                        call("add", {"a": 1, "b": 2}, "a"),
                        call("echo", {"text": "hi"}, "e"),
                        call("fail", {"reason": "r"}, "f"),
                    ]
                },
                {"text": "ok"},
            ),
        )
    assert outcomes(reply)[1] == ("echo", "blocked by the hook", False)
    assert seen[:3] == [
        ("before", "add", {"a": 1, "b": 2}, None),
        ("after", "add", {"result": 3}, None),
        ("before", "echo", {"text": "hi"}, None),
    ]
    assert seen[3] == ("before", "fail", {"reason": "r"}, None)
    assert seen[4][:3] == ("after", "fail", None) and "failed: r" in seen[4][3]
    assert len(seen) == 5  # the blocked call never ran, so no after hook


class Summarise(Processor):
    """Rewrites MCP `add` results: process_tool_result sees what the server answered."""

    id = "summarise"

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        self.seen.append((args.tool_name, args.result))
        args.message_list.update_tool_result(args.tool_call_id, f"sum is {args.result['result']}")


@pytest.mark.parametrize("transport", ["stdio"])
async def test_process_tool_result_sees_and_rewrites_mcp_results(mcp: McpServers) -> None:
    summarise = Summarise()
    async with serving([mcp_agent(mcp, output_processors=[summarise])], mcp=mcp) as running:
        await available(mcp)
        reply = await generate(running, script({"toolCalls": [call("add", {"a": 5, "b": 6}, "a")]}, {"text": "ok"}))
    assert summarise.seen == [("add", {"result": 11})]
    assert outcomes(reply) == [("add", "sum is 11", False)]


@pytest.mark.parametrize("transport", ["stdio"])
async def test_tool_call_filter_keeps_mcp_calls_out_of_the_next_prompt(running: Running, spy: LocalModelSpy) -> None:
    spec = opb.ProcessorSpec(name="tool-call-filter")
    spec.options.update({"filterAfterToolSteps": 0})
    reply = await generate(
        running,
        script({"toolCalls": [call("add", {"a": 1, "b": 2}, "a")]}, {"text": "ok"}, processors=[spec]),
    )
    assert outcomes(reply) == [("add", {"result": 3}, False)]
    first, second = spy.requests
    assert first.tools and second.tools  # the tools are still offered
    parts = [p for m in second.prompt for p in m.parts]
    assert not [p for p in parts if getattr(p, "tool_name", None) == "add"]


@pytest.mark.parametrize("transport", ["stdio"])
async def test_tool_search_finds_loads_and_calls_an_mcp_tool(running: Running, spy: LocalModelSpy) -> None:
    reply = await generate(
        running,
        script(
            {"toolCalls": [call("search_tools", {"query": "add whole numbers"}, "s")]},
            {"toolCalls": [call("load_tool", {"toolNames": ["add"]}, "l")]},
            {"toolCalls": [call("add", {"a": 20, "b": 22}, "a")]},
            {"text": "ok"},
            processors=[opb.ProcessorSpec(name="tool-search")],
        ),
    )
    found, loaded, added = outcomes(reply)
    assert found[1]["results"][0]["name"] == "add"
    assert found[1]["results"][0]["description"] == "Add two whole numbers."
    assert loaded[1]["loaded"] == ["add"]
    assert added == ("add", {"result": 42}, False)
    offered = [[t.name for t in r.tools] for r in spy.requests]
    assert "add" not in offered[0] and "add" in offered[2]


async def test_agentd_toml_selects_tools_and_shutdown_ends_the_server(tmp_path: Path) -> None:
    """`[[mcp_servers]]` and per-agent `tools` from agentd.toml; runs share the
    one server process, and it ends when agentd closes."""
    (tmp_path / "agentd.toml").write_text(
        f"""
[storage]
backend = "memory"

[[mcp_servers]]
id = "local"
command = {str(sys.executable)!r}
args = [{str(SERVER_SCRIPT)!r}]
env = {{ MCP_TEST_SECRET = "from-the-config-0123" }}

[[agents]]
id = "everything"
model = "local/scripted"
tools = {{ mcp = ["local"] }}

[[agents]]
id = "picked"
model = "local/scripted"
tools = ["add", "local:wh*"]
""",
        encoding="utf-8",
    )
    cfg = config.load(tmp_path / "agentd.toml", env={})
    async with serving(cfg.agents, mcp=cfg.mcp) as running:
        await available(cfg.mcp, server="local")
        listing = await running.agents.ListAgents(apb.ListAgentsRequest())
        tools = {a.id: {(t.name, t.source) for t in a.tools} for a in listing.agents}
        assert {name for name, _ in tools["everything"]} == LISTED
        assert tools["picked"] == {("add", "mcp:local"), ("whoami", "mcp:local")}
        reply = await generate(running, script({"toolCalls": [call("whoami", {}, "w")]}, {"text": "ok"}), "picked")
        assert outcomes(reply) == [("whoami", {"result": "from-the-config-0123"}, False)]
        pids = set()
        for _ in range(2):
            reply = await generate(running, script({"toolCalls": [call("pid", {}, "p")]}, {"text": "ok"}), "everything")
            pids.add(int(outcomes(reply)[0][1]["result"]))
        (pid,) = pids  # one connection, one server process, shared by the runs

    def exited() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    # Polled: the SDK ends the process when the connection closes.
    await until(exited, within=30, step=0.05, what="the stdio MCP server to end with agentd's shutdown")


async def test_an_app_agent_takes_mcp_tools_through_setup_beside_its_python_tools(tmp_path: Path) -> None:
    """`setup(host)` in an --app module: `host.mcp.select(...)` beside the agent's own tools."""
    (tmp_path / "agentd.toml").write_text(
        f'[storage]\nbackend = "memory"\n[[mcp_servers]]\nid = "local"\ncommand = {str(sys.executable)!r}\n'
        f"args = [{str(SERVER_SCRIPT)!r}]\n",
        encoding="utf-8",
    )

    def setup(host: Host) -> list[Agent]:
        own = Tool("add", "A Python add that wins the name", lambda args: "python add")
        return [
            Agent(
                id="py", model="local/scripted", tools=[own], tool_sources=[host.mcp.select([McpToolRef("local", "*")])]
            )
        ]

    cfg = config.load(tmp_path / "agentd.toml", env={})
    server = AgentdServer(Host.from_config(cfg, App(setup=setup)), dispatch_interval=0)
    port = await server.start("127.0.0.1:0")
    running = Running(server, f"127.0.0.1:{port}", grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
    try:
        await available(cfg.mcp, server="local")
        agent = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="py"))).agent
        sources = {t.name: t.source for t in agent.tools}
        assert sources["add"] == "python" and sources["echo"] == "mcp:local"
        reply = await generate(
            running,
            script(
                {"toolCalls": [call("add", {"a": 1, "b": 2}, "a"), call("echo", {"text": "e"}, "e")]}, {"text": "ok"}
            ),
            "py",
        )
        assert outcomes(reply) == [("add", "python add", False), ("echo", "e", False)]
    finally:
        await running.close()


async def test_an_mcp_tool_marked_background_answers_deferred_and_its_result_is_reconciled() -> None:
    """`[mcp_servers.tools.add] background = true`: the call answers at once with a
    deferred result, and the server's real answer replaces it in the thread."""
    spec = McpServerSpec(
        id="t", command=sys.executable, args=(str(SERVER_SCRIPT),), tools={"add": McpToolSettings(background=True)}
    )
    mcp = McpServers([spec], backoff=Backoff(first=0.1, most=0.5))
    storage = InMemoryStorage()
    agent = mcp_agent(mcp, memory=Memory(storage), default_options=CONTINUATION)
    async with serving([agent], mcp=mcp, storage=storage) as running:
        await available(mcp)
        reply = await running.agents.Generate(
            apb.GenerateRequest(
                agent_id="mcp",
                text="go",
                options=background_options(calls(("c1", "add", {"a": 2, "b": 3})), {"text": "started"}),
            )
        )
        ((name, deferred, is_error),) = outcomes(reply)
        assert name == "add" and deferred["status"] == "running" and deferred["taskId"] and not is_error
        results = await until(
            lambda: stored_results(running),
            holds=lambda got: got["c1"][0] == {"result": 5},
            within=20,
            step=0.05,
            what="the real answer stored",
        )
    assert results == {"c1": ({"result": 5}, False)}


async def test_a_tool_name_not_every_provider_takes_is_offered_in_their_shape_and_called_by_its_own(
    running: Running, spy: LocalModelSpy
) -> None:
    """`files.read` (OpenAI and Anthropic refuse a dot) reaches models as `files_read`,
    and a call to that name reaches the server as `files.read`."""
    agent = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="mcp"))).agent
    assert "files_read" in {t.name for t in agent.tools} and "files.read" not in {t.name for t in agent.tools}
    reply = await generate(running, script({"toolCalls": [call("files_read", {"path": "/x"}, "f")]}, {"text": "ok"}))
    assert outcomes(reply) == [("files_read", {"result": "read /x"}, False)]
    assert "files_read" in {t.name for t in spy.requests[0].tools}


async def test_a_tool_is_selected_by_the_name_its_server_lists_it_under(mcp: McpServers) -> None:
    agent = Agent(id="mcp", model="local/scripted", tool_sources=[mcp.select([McpToolRef("t", "files.read")])])
    async with serving([agent], mcp=mcp) as running:
        await available(mcp)
        tools = (await running.agents.GetAgent(apb.GetAgentRequest(agent_id="mcp"))).agent.tools
        assert [t.name for t in tools] == ["files_read"]


async def test_a_stdio_servers_stderr_is_logged_redacted_and_its_last_words_said_when_it_dies(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """What a stdio server prints goes to agentd's log under its id, redacted (here
    a secret of its env), never straight to agentd's own stderr."""
    secret = "stderr-secret-0123456789"
    spec = McpServerSpec(
        id="t",
        command=sys.executable,
        args=(str(SERVER_SCRIPT),),
        env={"MCP_TEST_SECRET": secret, "MCP_TEST_STDERR": "1"},
    )
    mcp = McpServers([spec], backoff=Backoff(first=0.1, most=0.5))
    caplog.set_level("INFO", logger="agentd.mcp")
    async with serving([mcp_agent(mcp)], mcp=mcp) as running:
        await available(mcp)
        await until(
            lambda: any("(stderr): starting with the key [REDACTED]" in r.getMessage() for r in caplog.records),
            within=30,
            step=0.05,
            what="the server's start-up line in the log",
        )
        await generate(running, script({"toolCalls": [call("crash", {}, "c")]}, {"text": "ok"}))
        await until(
            lambda: any("its last stderr line: crashing on purpose" in r.getMessage() for r in caplog.records),
            within=30,
            step=0.05,
            what="the server's last words in the line saying it went away",
        )
    assert all(secret not in r.getMessage() for r in caplog.records)
    assert secret not in capfd.readouterr().err
