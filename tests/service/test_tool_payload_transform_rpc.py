"""Tool payload transforms over gRPC: a secret the model passes to a tool (and
one the tool answers with) reaches the tool and the model, but no Stream
chunk, no Subscribe chunk, no Generate reply and no ListMessages row; rules
from agentd.toml (per agent and per tool) and from an --app tool's own
`transform`; the rules' shapes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format

from agentd import config
from agentd.runtime import (
    Agent,
    PayloadRule,
    Tool,
    ToolPayloadContext,
    ToolPayloadTransform,
    ToolPayloadTransformPolicy,
)
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.runs import LocalModelSpy
from support.server import Running, serving
from support.wire import scripted

SECRET = "hunter2-SECRET"
TOKEN = "tok-9f8e7d-SECRET"

TOML = """
[[agents]]
id = "vault"
model = "local/scripted"
error_processor_defaults = false

[agents.tool_transform.result]
truncate = 12

[agents.tool_transform.tools.login.args]
redact = ["password"]

[agents.tool_transform.tools.login.result]
redact = ["token"]
"""

received: list[Any] = []


def login(args: Any) -> dict[str, Any]:
    received.append(args)
    return {"token": TOKEN, "user": args["user"]}


def lookup(args: Any) -> str:
    return "a long answer that the policy's default truncates"


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[Running, InMemoryStorage]]:
    received.clear()
    path = tmp_path / "agentd.toml"
    path.write_text(TOML)
    (vault,) = config.load(path, env={}).agents
    storage = InMemoryStorage()
    vault.memory = Memory(storage)
    vault.tools = [Tool("login", "Log in", login), Tool("lookup", "Look up", lookup)]

    def shown_as_stars(ctx: ToolPayloadContext) -> Any:
        return {k: "***" for k in ctx.value} if isinstance(ctx.value, dict) else "***"

    own = Tool(
        "pin",
        "Check a PIN",
        lambda a: {"ok": True, "pin": a["pin"]},
        transform=ToolPayloadTransform(
            args=PayloadRule(function=shown_as_stars), result=PayloadRule(replace="checked")
        ),
    )
    app = Agent(
        id="app",
        model="local/scripted",
        tools=[own],
        memory=Memory(storage),
        error_processor_defaults=False,
        tool_transform=ToolPayloadTransformPolicy(default=ToolPayloadTransform(result=PayloadRule(redact=["pin"]))),
    )
    async with serving([vault, app], storage=storage) as running:
        yield running, storage


def options(*steps: dict[str, Any], thread: str = "t1") -> opb.ExecutionOptions:
    return scripted(*steps, memory=opb.MemoryOptions(resource="u1", thread_id=thread))


LOGIN = {"toolCalls": [{"id": "c1", "name": "login", "args": {"user": "ann", "password": SECRET}}]}


async def subscribed(running: Running, thread: str) -> tuple[asyncio.Task[list[Any]], Any]:
    """A subscription opened before the run; the task ends with its chunks once a run finishes."""
    sub = running.threads.Subscribe(tpb.SubscribeRequest(resource_id="u1", thread_id=thread))
    await sub.read()  # the snapshot: subscribed

    async def until_finish() -> list[Any]:
        out: list[Any] = []
        while True:
            response = await sub.read()
            if response is grpc.aio.EOF:
                return out
            out.extend(response.chunks.chunks)
            if any(c.WhichOneof("payload") == "finish" for c in response.chunks.chunks):
                return out

    return asyncio.create_task(until_finish()), sub


def text(messages: Any) -> str:
    return "\n".join(json_format.MessageToJson(m) for m in messages)


async def test_a_secret_the_model_passes_reaches_the_tool_and_the_model_but_no_caller(
    server: tuple[Running, InMemoryStorage], monkeypatch: pytest.MonkeyPatch
) -> None:
    running, storage = server
    spy = LocalModelSpy(monkeypatch)
    watching, sub = await subscribed(running, "t1")
    streamed = [
        r
        async for r in running.agents.Stream(
            apb.StreamRequest(agent_id="vault", text="log me in", options=options(LOGIN, {"text": "done"}))
        )
    ]
    subscribed_chunks = await asyncio.wait_for(watching, 10)
    sub.cancel()
    listed = (await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1"))).messages

    # The tool got the real arguments, and the model's next prompt holds them and the real result.
    assert received == [{"user": "ann", "password": SECRET}]
    second_prompt = repr(spy.requests[1].prompt)
    assert SECRET in second_prompt and TOKEN in second_prompt
    # Stored for the model's later turns as they were.
    stored = repr(await storage.list_messages(MessageQuery("t1")))
    assert SECRET in stored

    for where, shown in [
        ("Stream", text(streamed)),
        ("Subscribe", text(subscribed_chunks)),
        ("ListMessages", text(listed)),
    ]:
        assert SECRET not in shown, where
        assert TOKEN not in shown, where
        assert "[REDACTED]" in shown, where
    # What is shown instead: the call's arguments, and the result (both its args and its value).
    calls = [c.tool_call for c in (c for r in streamed for c in r.chunks) if c.WhichOneof("payload") == "tool_call"]
    assert json_format.MessageToDict(calls[0].args) == {"user": "ann", "password": "[REDACTED]"}
    results = [c.tool_result for r in streamed for c in r.chunks if c.WhichOneof("payload") == "tool_result"]
    assert json_format.MessageToDict(results[0].result) == {"token": "[REDACTED]", "user": "ann"}
    assert json_format.MessageToDict(results[0].args)["password"] == "[REDACTED]"
    # The streamed argument fragments are withheld.
    deltas = [c.tool_call_delta for r in streamed for c in r.chunks if c.WhichOneof("payload") == "tool_call_delta"]
    assert deltas and all(d.args_text_delta == "" for d in deltas)


async def test_a_connect_stream_shows_the_transformed_payloads_too(server: tuple[Running, InMemoryStorage]) -> None:
    running, _ = server
    frames: asyncio.Queue[tpb.ConnectRequest | None] = asyncio.Queue()

    async def send() -> Any:
        while (frame := await frames.get()) is not None:
            yield frame

    call = running.threads.Connect(send())
    opening = tpb.ConnectOpen(agent_id="vault", resource_id="u1", thread_id="t4")
    opening.stream_options.CopyFrom(options(LOGIN, {"text": "done"}, thread="t4"))
    await frames.put(tpb.ConnectRequest(request_id="o", open=opening))
    assert (await call.read()).HasField("snapshot")
    message = tpb.ConnectSendMessage(message=spb.MessageInput(text="log me in"))
    await frames.put(tpb.ConnectRequest(request_id="m", send_message=message))
    seen: list[Any] = []
    while not any(c.WhichOneof("payload") == "finish" for m in seen for c in m.chunks.chunks):
        seen.append(await asyncio.wait_for(call.read(), 10))
    await frames.put(None)
    shown = text(seen)
    assert received == [{"user": "ann", "password": SECRET}]
    assert SECRET not in shown and TOKEN not in shown and "[REDACTED]" in shown


async def test_generate_shows_the_transformed_payloads_and_the_default_applies_to_other_tools(
    server: tuple[Running, InMemoryStorage],
) -> None:
    running, _ = server
    lookup_call = {"toolCalls": [{"id": "c2", "name": "lookup", "args": {"q": "x"}}]}
    reply = await running.agents.Generate(
        apb.GenerateRequest(
            agent_id="vault", text="go", options=options(LOGIN, lookup_call, {"text": "ok"}, thread="t2")
        )
    )
    shown = json_format.MessageToJson(reply)
    assert SECRET not in shown and TOKEN not in shown
    (lookup_result,) = [r for s in reply.steps for r in s.tool_results if r.tool_name == "lookup"]
    # The agent's default rule (truncate) for a tool with no rule of its own.
    assert lookup_result.result.string_value == "a long answe…[37 more characters]"


async def test_a_tools_own_transform_comes_before_the_agents_policy(server: tuple[Running, InMemoryStorage]) -> None:
    running, _ = server
    pin = {"toolCalls": [{"id": "p1", "name": "pin", "args": {"pin": "4711"}}]}
    reply = await running.agents.Generate(
        apb.GenerateRequest(agent_id="app", text="check", options=options(pin, {"text": "ok"}, thread="t3"))
    )
    listed = (await running.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t3"))).messages
    for shown in (json_format.MessageToJson(reply), text(listed)):
        assert "4711" not in shown
    (result,) = [r for s in reply.steps for r in s.tool_results]
    assert result.result.string_value == "checked"  # the tool's own `replace`, not the agent's redact
    assert json_format.MessageToDict(result.args) == {"pin": "***"}


def test_the_toml_rules_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "agentd.toml"
    for bad, message in [
        ('tool_transform = { args = { redact = "password" } }', "tool_transform.args.redact"),
        ("tool_transform = { result = { truncate = -1 } }", "tool_transform.result.truncate"),
        ("tool_transform = { result = { hide = true } }", "unknown key(s) hide"),
        ("tool_transform = { tools = { login = { input = {} } } }", "tool_transform.tools.login: unknown key(s) input"),
    ]:
        path.write_text(f'[[agents]]\nid = "a"\n{bad}\n')
        with pytest.raises(config.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            config.load(path, env={})


def test_rules_apply_in_order() -> None:
    rule = PayloadRule(redact=["key"], truncate=3)
    ctx = ToolPayloadContext("t", "c", "args", {"key": "v", "deep": [{"key": 1, "long": "abcdef"}]})
    assert rule.apply(ctx) == {"key": "[REDACTED]", "deep": [{"key": "[REDACTED]", "long": "abc…[3 more characters]"}]}
    assert PayloadRule(replace=None).apply(ctx) is None
