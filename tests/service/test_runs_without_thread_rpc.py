"""Runs without a thread over gRPC: aborted by their run id (and gone once
they end), and a memory agent called without a thread runs without memory."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from agentd.grpc.auth import Authenticator, Credential, hash_token, identity
from agentd.grpc.gate import Gate
from agentd.runtime import Agent
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.memory import Memory
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import Running, serving
from support.wire import drain


@pytest.fixture
async def running(storage: InMemoryStorage) -> AsyncIterator[Running]:
    async with serving([Agent(id="echo"), Agent(id="chat", memory=Memory(storage))], storage=storage) as running:
        yield running


def slow() -> opb.ExecutionOptions:
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"delayMs": 30}})
    return options


async def test_a_stream_without_a_thread_is_aborted_by_its_run_id(running: Running) -> None:
    call = running.agents.Stream(apb.StreamRequest(agent_id="echo", text=" ".join(["w"] * 200), options=slow()))
    run_id = (await call.read()).chunks[0].run_id
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
    assert (aborted.aborted, aborted.run_id) == (True, run_id)
    chunks = await drain(call)
    assert chunks[-1].abort.reason == "ABORTED"
    await running.host.runs.wait_finished(run_id)
    assert running.host.runs.get(run_id) is None  # gone from the registry once it ended
    again = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
    assert (again.aborted, again.run_id) == (False, "")


async def test_a_generate_without_a_thread_is_aborted_by_its_run_id(running: Running) -> None:
    call = running.agents.Generate(apb.GenerateRequest(agent_id="echo", text=" ".join(["w"] * 200), options=slow()))
    run_id = await first_active(running)
    aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
    assert (aborted.aborted, aborted.run_id) == (True, run_id)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert (info.value.code(), rich_error(info.value).reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ABORTED")


async def first_active(running: Running) -> str:
    """The id of the first run in flight, once there is one (Generate answers only at the end)."""
    # Polled: Generate says nothing until the run ends.
    active = await until(running.host.runs.active, step=0.005, what="a run to start")
    return active[0].run_id


async def test_a_finished_or_unknown_run_id_aborts_nothing(running: Running) -> None:
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="echo", text="quick"))
    for run_id in (reply.run_id, "no-such-run"):
        aborted = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id))
        assert not aborted.aborted


async def test_abort_run_needs_a_thread_or_a_run_id(running: Running) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await running.threads.AbortRun(tpb.AbortRunRequest())
    err = rich_error(info.value)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT and "thread_id" in err.violations


async def test_a_memory_agent_without_a_thread_runs_without_memory(running: Running, storage: InMemoryStorage) -> None:
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="no thread here"))
    assert reply.text == "no thread here"  # the echo model answered
    resource_only = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1"))
    reply = await running.agents.Generate(apb.GenerateRequest(agent_id="chat", text="again", options=resource_only))
    assert reply.text == "again"
    assert (await storage.list_threads("u1")).threads == []  # nothing recalled, nothing saved


async def test_only_whoever_started_a_run_aborts_it_by_its_id() -> None:
    tokens = {"acme": "agentd_acme-writer-0123456789abcdef", "globex": "agentd_globex-writer-0123456789abcd"}
    authenticator = Authenticator(
        ("token",),
        tokens=[
            Credential(hash_token(token), identity(tenant, f"{tenant}-svc", ["writer"], ["*"], "token", "test"))
            for tenant, token in tokens.items()
        ],
    )
    cache = InMemoryServerCache()
    async with serving([Agent(id="echo")], caches={"memory": cache}, gate=Gate(authenticator, cache=cache)) as running:

        def bearer(tenant: str) -> tuple[tuple[str, str], ...]:
            return (("authorization", f"Bearer {tokens[tenant]}"),)

        call = running.agents.Stream(
            apb.StreamRequest(agent_id="echo", text=" ".join(["w"] * 200), options=slow()), metadata=bearer("acme")
        )
        run_id = (await call.read()).chunks[0].run_id
        other = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id), metadata=bearer("globex"))
        assert not other.aborted  # another tenant's run does not exist for it
        mine = await running.threads.AbortRun(tpb.AbortRunRequest(run_id=run_id), metadata=bearer("acme"))
        assert mine.aborted
        assert (await drain(call))[-1].abort.reason == "ABORTED"
