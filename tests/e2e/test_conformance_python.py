"""The Python client (clients/python, `agentd_client`) against a real server.

`test_conformance_runner` runs tests/conformance/run_python.py, the shared
scenario set, against `agentd serve --config tests/conformance/agentd.toml
--app tests.conformance.app`; the other tests exercise the client's API on
the same server (and one with a tiny subscriber buffer, to force fell-behind).
The runner also passes against the same server with `[auth] mode = "token"`
over TLS, given the token in `$AGENTD_TOKEN` and the CA with `--cacert`, and
with mutual TLS given a client certificate (`--cert`, `--key`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from agentd_client import (
    AgentdClient,
    AgentdError,
    ClientTool,
    ResponseCache,
    chunk_kind,
    execution_options,
    first_text,
    from_value,
    joined_text,
    user,
)
from agentd_client._tracing import trace_metadata
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from agentd_proto.v1 import options_pb2

from .secure import secure_conformance_server
from .serverproc import REPO_ROOT, ServerProcess, served, start_server

CONFORMANCE_DIR = REPO_ROOT / "tests" / "conformance"
CONFIG = CONFORMANCE_DIR / "agentd.toml"
SCENARIOS = CONFORMANCE_DIR / "scenarios.json"
RUNNER = CONFORMANCE_DIR / "run_python.py"
APP_ARGS = ["--app", "tests.conformance.app"]
RUNNER_TIMEOUT_S = 300
READ_TIMEOUT_S = 30.0


def _serve(tmp: Path, config: Path) -> Iterator[ServerProcess]:
    yield from served(start_server(extra_args=APP_ARGS, config=config, log_dir=tmp, cwd=REPO_ROOT))


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app`."""
    yield from _serve(tmp_path_factory.mktemp("agentd-conformance"), CONFIG)


@pytest.fixture(scope="module")
def tiny_buffer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """The conformance server with a 2-chunk subscriber buffer: subscribers fall behind."""
    tmp = tmp_path_factory.mktemp("agentd-tiny-buffer")
    config = tmp / "agentd.toml"
    text = CONFIG.read_text(encoding="utf-8")
    assert "[threads]\n" in text
    config.write_text(text.replace("[threads]\n", "[threads]\nsubscriber_buffer = 2\n", 1), encoding="utf-8")
    yield from _serve(tmp, config)


@pytest.fixture
async def client(conformance_server: ServerProcess) -> AsyncIterator[AgentdClient]:
    async with AgentdClient(conformance_server.addr, timeout=READ_TIMEOUT_S) as c:
        yield c


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# ------------------------------------------------------------ conformance


@pytest.mark.timeout(RUNNER_TIMEOUT_S + 60)
def test_conformance_runner(conformance_server: ServerProcess) -> None:
    run_conformance(conformance_server.addr, conformance_server)


@pytest.mark.timeout(RUNNER_TIMEOUT_S + 60)
def test_conformance_runner_round_robin_over_three_replicas(conformance_replicas: list[ServerProcess]) -> None:
    """Every call of every scenario may land on another replica: threads,
    subscriptions, signals and the cache still behave as on one server."""
    run_conformance(",".join(s.addr for s in conformance_replicas), *conformance_replicas)


@pytest.mark.timeout(RUNNER_TIMEOUT_S + 60)
def test_conformance_runner_with_a_token_over_tls(tmp_path: Path) -> None:
    with secure_conformance_server(tmp_path) as (server, pki, caller):
        env = {**os.environ, "AGENTD_TOKEN": caller.token}
        run_conformance(server.addr, server, options=["--cacert", str(pki.ca)], env=env)


@pytest.mark.timeout(RUNNER_TIMEOUT_S + 60)
def test_conformance_runner_over_mutual_tls(tmp_path: Path) -> None:
    """A client certificate alone names the caller (mode mtls)."""
    with secure_conformance_server(tmp_path, mtls=True) as (server, pki, _):
        env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}
        options = ["--cacert", str(pki.ca), "--cert", str(pki.client_cert), "--key", str(pki.client_key)]
        run_conformance(server.addr, server, options=options, env=env)


def run_conformance(
    addr: str, *servers: ServerProcess, options: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> None:
    scenarios = json.loads(SCENARIOS.read_text(encoding="utf-8"))["scenarios"]
    args = [sys.executable, str(RUNNER), "--addr", addr, "--scenarios", str(SCENARIOS), *options]
    try:
        result = subprocess.run(
            args, cwd=REPO_ROOT, capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S, check=False, env=env
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"{args} timed out after {RUNNER_TIMEOUT_S}s:\n{err.stdout!r}\n{err.stderr!r}")
    logs = "\n".join(server.log_tail() for server in servers)
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{logs}"
    lines = result.stdout.strip().splitlines()
    assert lines, f"the runner printed nothing\n{output}"
    summary = re.fullmatch(r"conformance: (\d+) passed, (\d+) failed", lines[-1])
    assert summary, f"the last line is not the summary\n{output}"
    passed, failed = int(summary.group(1)), int(summary.group(2))
    assert result.returncode == 0, f"the runner exited with {result.returncode}\n{output}"
    assert (passed, failed) == (len(scenarios), 0), output
    assert len(lines) == len(scenarios) + 1, output  # one line per scenario, then the summary


# ------------------------------------------------------------ agents


async def test_generate_and_agents(client: AgentdClient) -> None:
    ids = [a.id for a in await client.list_agents()]
    assert {"echo", "chat", "guarded", "tools"} <= set(ids)
    agent = await client.get_agent("chat")
    assert (agent.id, agent.model) == ("chat", "local/echo")
    result = await client.generate("echo", "hello client")
    assert (result.text, result.finish_reason) == ("hello client", "STOP")
    assert result.run_id and result.usage.input_tokens >= 1
    # Messages instead of text, and option keywords mapped onto ExecutionOptions.
    result = await client.generate(
        "echo", [{"role": "user", "content": "from a dict"}], max_steps=2, temperature=0.5, request_context={"a": 1}
    )
    assert result.text == "from a dict"
    assert (await client.generate("echo", [user("from a Message")])).text == "from a Message"


async def test_agent_overrides(client: AgentdClient) -> None:
    """An admin (anonymous, without auth) edits echo's instructions and tool
    descriptions, lists the versions, restores one and deletes them all."""
    before = await client.get_agent_overrides("echo")
    first = await client.update_agent_overrides("echo", instructions="Be brief.")
    assert (first.version, first.instructions) == (before.version + 1, "Be brief.")
    assert (await client.get_agent("echo")).instructions == "Be brief."
    second = await client.update_agent_overrides("echo", instructions=None)  # None: the code's again
    assert not second.HasField("instructions") and list(second.overridden_fields) == []
    versions = await client.agent_override_versions("echo", page_size=1).all()
    assert [v.version for v in versions[:2]] == [second.version, first.version]
    restored = await client.restore_agent_overrides("echo", first.version)
    assert (restored.version, restored.instructions) == (second.version + 1, "Be brief.")
    with pytest.raises(AgentdError) as caught:
        await client.update_agent_overrides("echo", tool_descriptions={"nope": "x"})
    assert (
        caught.value.code_name == "INVALID_ARGUMENT"
        and "overrides.tool_descriptions['nope']" in caught.value.violations
    )
    deleted = await client.delete_agent_overrides("echo")
    assert deleted.version == restored.version + 1 and list(deleted.overridden_fields) == []


async def test_tripwire_is_a_result_not_an_error(client: AgentdClient) -> None:
    result = await client.generate("guarded", "this is forbidden")
    assert result.finish_reason == "OTHER"
    assert result.tripwire is not None and result.tripwire.processor_id == "guard"


async def test_stream_chunks_and_batches(client: AgentdClient) -> None:
    stream = client.stream("echo", "one two three")
    kinds = [chunk_kind(chunk) async for chunk in stream]
    assert kinds[0] == "start" and kinds[-1] == "finish" and kinds.count("text_delta") == 3
    assert (stream.text, stream.finish_reason) == ("one two three", "STOP") and stream.run_id
    batches = [batch async for batch in client.stream_batches("echo", "a b")]
    chunks = [c for batch in batches for c in batch]
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    assert joined_text(chunks) == "a b"


async def test_errors_carry_reason_metadata_and_violations(client: AgentdClient) -> None:
    with pytest.raises(AgentdError) as caught:
        await client.get_agent("no-such-agent")
    err = caught.value
    assert (err.code, err.code_name, err.reason) == (grpc.StatusCode.NOT_FOUND, "NOT_FOUND", "AGENT_NOT_FOUND")
    assert err.metadata.get("agent_id") == "no-such-agent" and err.domain == "agentd"

    with pytest.raises(AgentdError) as caught:
        await client.generate("echo", "x", max_steps=0, temperature=5)
    err = caught.value
    assert (err.code_name, err.reason) == ("INVALID_ARGUMENT", "INVALID_REQUEST")
    assert set(err.violations) == {"options.max_steps", "options.model_settings.temperature"}

    with pytest.raises(AgentdError) as caught:
        await client.generate("echo", "x", request_context={"agentd.threadId": "t"})
    assert caught.value.reason == "RESERVED_CONTEXT_KEY"

    with pytest.raises(AgentdError) as caught:  # a stream's caller mistake, raised while iterating
        await client.stream("echo", "x", client_tools=["pick_color"]).collect()
    assert caught.value.reason == "CLIENT_TOOLS_REQUIRE_THREAD"


# ------------------------------------------------------------ threads


async def test_thread_crud_and_message_pages(client: AgentdClient) -> None:
    resource, thread_id = fresh("res"), fresh("thread")
    created = await client.create_thread(resource, thread_id=thread_id, title="first", metadata={"k": "v"})
    assert (created.id, created.title) == (thread_id, "first")
    with pytest.raises(AgentdError) as caught:
        await client.create_thread(resource, thread_id=thread_id)
    assert caught.value.reason == "THREAD_ALREADY_EXISTS"
    updated = await client.update_thread(thread_id, title="renamed", resource_id=resource)
    assert updated.title == "renamed" and from_value(updated.metadata.fields["k"]) == "v"
    got = await client.get_thread(thread_id, resource_id=resource)
    assert got.thread.title == "renamed" and got.active_run_id == ""
    assert [t.id async for t in client.list_threads(resource)] == [thread_id]

    for word in ("one", "two", "three"):
        await client.generate("chat", word, memory=(resource, thread_id))
    pager = client.list_messages(thread_id, resource_id=resource, page_size=2)
    pages = [page async for page in pager.pages()]
    assert [len(p) for p in pages] == [2, 2, 2]
    assert [first_text(m) for m in await pager.all()] == ["one", "one", "two", "two", "three", "three"]
    newest = [first_text(m) async for m in client.list_messages(thread_id, resource_id=resource, descending=True)]
    assert newest[0] == "three"

    await client.delete_thread(thread_id, resource_id=resource)
    with pytest.raises(AgentdError) as caught:
        await client.get_thread(thread_id, resource_id=resource)
    assert caught.value.reason == "THREAD_NOT_FOUND"


async def read_until_finish(source: Any, into: list[Any] | None = None) -> list[Any]:
    out: list[Any] = [] if into is None else into

    async def read() -> list[Any]:
        async for chunk in source:
            out.append(chunk)
            if not chunk.parent_run_id and chunk_kind(chunk) in ("finish", "error", "abort"):
                return out
        raise AssertionError("the stream ended before the run")

    return await asyncio.wait_for(read(), READ_TIMEOUT_S)


async def test_subscribe_sees_a_woken_run_and_resumes_by_offset(client: AgentdClient) -> None:
    resource, thread_id = fresh("res"), fresh("thread")
    async with client.subscribe(thread_id, resource_id=resource) as sub:
        assert sub.snapshot is not None and sub.snapshot.active_run_id == ""
        routing = await client.send_message("chat", "ping pong", thread_id=thread_id, resource_id=resource)
        assert routing.action == "wake" and routing.run_id and routing.signal is not None
        chunks = await read_until_finish(sub)
        assert {c.run_id for c in chunks} == {routing.run_id}
        assert [c.signal.signal.text for c in chunks if c.HasField("signal")] == ["ping pong"]
        assert joined_text(chunks) == "ping pong"
        epoch, offset = sub.position or ("", 0)
        assert offset == chunks[-1].offset
    # A later subscription resuming after the third chunk replays the rest.
    async with client.subscribe(thread_id, resource_id=resource, after=(epoch, chunks[2].offset)) as again:
        replayed = await read_until_finish(again)
    assert [c.offset for c in replayed] == [c.offset for c in chunks[3:]]
    # An epoch the server never issued cannot be resumed.
    with pytest.raises(AgentdError) as caught:
        await client.subscribe(thread_id, resource_id=resource, after=("not-an-epoch", 1)).open()
    assert (caught.value.code_name, caught.value.reason) == ("OUT_OF_RANGE", "RESUME_OFFSET_EXPIRED")


@pytest.mark.timeout(120)
async def test_subscribe_resumes_by_itself_after_falling_behind(tiny_buffer_server: ServerProcess) -> None:
    text = " ".join(f"w{i}" for i in range(200))
    async with AgentdClient(tiny_buffer_server.addr, timeout=READ_TIMEOUT_S) as client:
        resource, thread_id = fresh("res"), fresh("thread")
        async with client.subscribe(thread_id, resource_id=resource) as sub:
            routing = await client.send_message("chat", text, thread_id=thread_id, resource_id=resource)
            await asyncio.sleep(0.5)  # the run outpaces a reader that does not read
            chunks = await read_until_finish(sub)
        assert sub.reconnects >= 1, "the subscriber never fell behind: the test proves nothing"
        run = [c for c in chunks if c.run_id == routing.run_id]
        assert [c.seq for c in run] == list(range(1, len(run) + 1))  # no gap, no duplicate
        offsets = [c.offset for c in chunks]
        assert offsets == sorted(set(offsets))
        assert joined_text(run) == text

        # Without reconnecting, the subscription ends at the fell-behind marker.
        thread_id = fresh("thread")
        async with client.subscribe(thread_id, resource_id=resource, reconnect=False) as sub:
            await client.send_message("chat", text, thread_id=thread_id, resource_id=resource)
            await asyncio.sleep(0.5)
            seen = [chunk async for chunk in sub]
        assert sub.fell_behind is not None and sub.fell_behind.last_offset >= (seen[-1].offset if seen else 0)

        # A Connect session resumes the same way, and its chunks have no gap either.
        async with client.connect("chat", fresh("thread"), resource) as session:
            routing = await session.send_message(text)
            chunks = await session.read_run(routing.run_id, timeout=READ_TIMEOUT_S)
        assert session.reconnects >= 1, "the session never fell behind: the test proves nothing"
        run = [c for c in chunks if c.run_id == routing.run_id]
        assert [c.seq for c in run] == list(range(1, len(run) + 1))
        assert joined_text(run) == text


# ------------------------------------------------------------ connect


async def test_connect_client_tools_abort_and_bad_frames(client: AgentdClient) -> None:
    resource, thread_id = fresh("res"), fresh("thread")
    asked: list[Any] = []

    def pick_color(args: Any, call: Any) -> str:  # a sync handler that also takes the ToolCall
        asked.append((args, call.tool_name))
        return "blue"

    tools = {"pick_color": ClientTool(pick_color, "Asks the user for a color", {"type": "object"})}
    async with client.connect("tools", thread_id, resource, tools=tools) as session:
        assert session.snapshot is not None
        routing = await session.send_message("choose")
        assert routing.action == "wake"
        chunks = await session.read_run(routing.run_id, timeout=READ_TIMEOUT_S)
        assert asked == [({"choices": ["red", "blue"]}, "pick_color")]
        results = [from_value(c.tool_result.result) for c in chunks if c.HasField("tool_result")]
        assert results == ["blue"] and joined_text(chunks) == "You picked blue."

        with pytest.raises(AgentdError) as caught:  # a bad frame: an error answer, the session goes on
            await session.send_signal("banana", "x")
        assert caught.value.reason == "UNKNOWN_SIGNAL_TYPE"
        assert await session.abort() is None  # idle: nothing to abort
        persisted = await session.send_message("just store it", if_idle="persist")
        assert persisted.action == "persist"

    async with client.connect("chat", fresh("thread"), resource) as session:
        slow = {"provider_options": {"local": {"delayMs": 20}}}
        routing = await session.send_message(" ".join(["w"] * 200), stream_options=slow)
        assert await session.abort(routing.run_id) == routing.run_id
        chunks = await session.read_run(routing.run_id, timeout=READ_TIMEOUT_S)
        assert chunk_kind(chunks[-1]) == "abort" and chunks[-1].abort.reason == "ABORTED"


# ------------------------------------------------------------ signals


async def test_signals_state_and_notifications(client: AgentdClient) -> None:
    resource, thread_id = fresh("res"), fresh("thread")
    target = {"thread_id": thread_id, "resource_id": resource}
    assert (await client.send_signal("chat", "reactive", "note", if_idle="persist", **target)).action == "persist"
    first = await client.send_state_signal("chat", "browser", "on page 1", cache_key="p1", if_idle="persist", **target)
    assert first.action == "persist" and first.version is not None
    again = await client.send_state_signal("chat", "browser", "on page 1", cache_key="p1", if_idle="persist", **target)
    assert again.action == "skipped_unchanged"
    queued = await client.queue_message("chat", "queued", if_idle="persist", **target)
    assert queued.action in ("persist", "wake", "deliver")

    sent = await client.send_notification(
        "chat", source="ci", kind="build", summary="build failed", priority="low", payload={"id": 7}, **target
    )
    assert sent.notification.id and sent.action
    listed = await client.list_notifications(thread_id, resource_id=resource).all()
    assert [n.id for n in listed] == [sent.notification.id]
    seen = await client.update_notification_status(thread_id, sent.notification.id, "seen")
    assert seen.status == 3  # NOTIFICATION_STATUS_SEEN
    with pytest.raises(AgentdError) as caught:
        await client.send_signal("chat", "banana", "x", **target)
    assert caught.value.reason == "UNKNOWN_SIGNAL_TYPE"


# ------------------------------------------------------------ cache


async def test_cache_rpcs_and_response_cache_overrides(client: AgentdClient) -> None:
    prefix = fresh("py-client")
    await client.set_cache_entry(f"{prefix}:a", {"n": 1, "list": [1, "x"]}, ttl=60)
    await client.set_cache_entry(f"{prefix}:b", "pinned", pinned=True)
    entry = await client.get_cache_entry(f"{prefix}:a")
    assert entry.found and entry.value == {"n": 1, "list": [1, "x"]}
    assert not (await client.get_cache_entry(f"{prefix}:missing")).found
    assert await client.delete_cache_entry(f"{prefix}:a")
    assert await client.clear_cache(prefix) == 1

    question = f"cached {prefix}"
    before = await client.get_cache_stats()
    await client.generate("cached-echo", question)
    await client.generate("cached-echo", question)
    hit = await client.get_cache_stats()
    assert hit.hits > before.hits
    await client.generate("cached-echo", question, response_cache=ResponseCache(bust=True))
    assert (await client.get_cache_stats()).hits == hit.hits  # a bust skips the read
    keyed = ResponseCache(key=f"{prefix}:fixed", no_scope=True)
    await client.generate("cached-echo", question, response_cache=keyed)
    assert (await client.get_cache_entry(f"{prefix}:fixed")).found
    assert await client.invalidate_response_cache("cached-echo", scope="conformance") >= 1


# ------------------------------------------------------------ offline


def test_option_keywords_map_onto_execution_options() -> None:
    pb = execution_options(
        max_steps=3,
        tool_choice="required",
        active_tools=[],
        temperature=0.2,
        provider_options={"local": {"delayMs": 1}},
        memory=("user-1", {"id": "t1", "title": "Title"}),
        response_cache={"scope": "tenant", "bust": True},
        request_context={"tenant": "a"},
        client_tools=["pick_color", {"name": "ask", "description": "d", "input_schema": {"type": "object"}}],
        input_processors=[],
        output_processors=["moderation-notes", {"name": "guard", "options": {"word": "x"}}],
        prepare_step="step-fn",
    )
    assert pb.max_steps == 3 and pb.tool_choice.mode == options_pb2.TOOL_CHOICE_MODE_REQUIRED
    assert pb.HasField("active_tools") and not pb.active_tools.names
    assert pb.model_settings.temperature == pytest.approx(0.2)
    assert pb.memory.resource == "user-1" and pb.memory.thread_object.title == "Title"
    assert pb.response_cache.scope == "tenant" and pb.response_cache.bust
    assert [t.name for t in pb.client_tools] == ["pick_color", "ask"]
    assert pb.HasField("input_processors") and not pb.input_processors.processors
    assert [p.processor.name for p in pb.output_processors.processors] == ["moderation-notes", "guard"]
    assert not pb.HasField("error_processors")
    assert execution_options(tool_choice="lookup").tool_choice.tool_name == "lookup"
    assert execution_options(memory=("u", "t")).memory.thread_id == "t"
    assert execution_options(response_cache=ResponseCache(no_scope=True)).response_cache.HasField("no_scope")
    with pytest.raises(TypeError):
        execution_options(max_stepz=1)


def test_agentd_error_parses_the_rich_status() -> None:
    status = status_pb2.Status(code=3, message="bad")
    info, bad = any_pb2.Any(), any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="INVALID_REQUEST", domain="agentd", metadata={"k": "v"}))
    violation = error_details_pb2.BadRequest.FieldViolation
    bad.Pack(error_details_pb2.BadRequest(field_violations=[violation(field="messages[1].role", description="bad")]))
    status.details.extend([info, bad])
    err = AgentdError.from_status(status)
    assert (err.code, err.reason, err.metadata) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST", {"k": "v"})
    assert err.violations == {"messages[1].role": "bad"}
    assert "INVALID_REQUEST" in str(err)


class _RecordMetadata(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        self.seen.append({k: v for k, v in (details.metadata or ())})
        return await continuation(details, request)


async def test_calls_carry_metadata_and_the_current_spans_traceparent(conformance_server: ServerProcess) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    tracer = sdk.TracerProvider().get_tracer("agentd-client-test")
    recorder = _RecordMetadata()
    channel = grpc.aio.insecure_channel(conformance_server.addr, interceptors=[recorder])
    try:
        async with AgentdClient(channel=channel, metadata={"x-tenant": "acme"}) as client:
            await client.generate("echo", "untraced")
            with tracer.start_as_current_span("call") as span:
                ctx = span.get_span_context()
                await client.generate("echo", "traced", metadata={"x-request": "r1"})
    finally:
        await channel.close()
    untraced, traced = recorder.seen
    assert untraced["x-tenant"] == "acme" and "traceparent" not in untraced
    assert (traced["x-tenant"], traced["x-request"]) == ("acme", "r1")
    assert traced["traceparent"] == f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
    assert trace_metadata() == []  # no span is current any more
