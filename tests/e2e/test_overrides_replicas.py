"""Editor overrides across two `agentd serve` replicas on one real
redis-server: written through one, the next run on either uses them, and the
`editor` policies of agentd.toml hold on both.

The agents run `prompt/...` (tests/prompt_app.py): the reply is the run's
system prompt and tools, so the test reads what each replica's run was sent."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import field_mask_pb2

from agentd_proto.v1 import agent_overrides_pb2 as opb
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from support.polling import until

from .serverproc import ServerProcess, start_server

CONFIG = """
[coordination]
backend = "redis"
redis_url = "{url}"
key_prefix = "{prefix}lease:"
cluster_key_prefix = "{prefix}cluster:"

[storage]
key_prefix = "{prefix}store:"

[cache]
key_prefix = "{prefix}cache:"

[[agents]]
id = "open"
model = "prompt/x"
instructions = "Code instructions."

[[agents]]
id = "locked"
model = "prompt/x"
instructions = "Code instructions."
editor = false

[[agents]]
id = "descriptions"
model = "prompt/x"
instructions = "Code instructions."
editor = {{ instructions = true, tools = {{ description = true }} }}
"""
#: Shorter than the overrides cache's TTL (30 s): a replica that sees a write sooner was told of it.
SEEN_WITHIN = 10.0


@pytest.fixture(scope="module")
def replicas(tmp_path_factory: pytest.TempPathFactory, redis_server: object) -> Iterator[dict[str, ServerProcess]]:
    folder = tmp_path_factory.mktemp("override-replicas")
    config = folder / "agentd.toml"
    config.write_text(CONFIG.format(url=redis_server.url, prefix=f"ovr-{uuid.uuid4().hex[:8]}:"))  # type: ignore[attr-defined]
    servers = {name: start_server(["--app", "tests.prompt_app"], config=config, log_dir=folder / name) for name in "ab"}
    try:
        for server in servers.values():
            server.wait_serving(timeout=60)  # a loaded machine starts slowly
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def stub(channel: grpc.aio.Channel) -> agent_service_pb2_grpc.AgentServiceStub:
    return agent_service_pb2_grpc.AgentServiceStub(channel)


async def run(channel: grpc.aio.Channel, agent_id: str) -> str:
    return (await stub(channel).Generate(apb.GenerateRequest(agent_id=agent_id, text="hi"), timeout=30)).text


def instructions(agent_id: str, text: str) -> opb.UpdateAgentOverridesRequest:
    return opb.UpdateAgentOverridesRequest(
        overrides=opb.AgentOverrides(agent_id=agent_id, instructions=text),
        update_mask=field_mask_pb2.FieldMask(paths=["instructions"]),
    )


async def until_effective(channel: grpc.aio.Channel, agent_id: str, text: str) -> None:
    async def instructions() -> str:
        return (await stub(channel).GetAgent(apb.GetAgentRequest(agent_id=agent_id), timeout=10)).agent.instructions

    await until(instructions, holds=lambda shown: shown == text, within=SEEN_WITHIN, step=0.05, what=f"{text!r} shown")


async def test_a_write_through_one_replica_reaches_the_next_run_on_both(replicas: dict[str, ServerProcess]) -> None:
    async with grpc.aio.insecure_channel(replicas["a"].addr) as a, grpc.aio.insecure_channel(replicas["b"].addr) as b:
        # b reads (and caches) the code's instructions first.
        assert await run(b, "open") == "system=[Code instructions.] tools=[]"
        written = (await stub(a).UpdateAgentOverrides(instructions("open", "Edited on a."), timeout=10)).overrides
        assert await run(a, "open") == "system=[Edited on a.] tools=[]"  # the writer: at once
        await until_effective(b, "open", "Edited on a.")  # the other: told of it, well before its cache expires
        assert await run(b, "open") == "system=[Edited on a.] tools=[]"

        # And back, written through b; the history is one, whichever replica lists it.
        await stub(b).RestoreAgentOverrides(
            opb.RestoreAgentOverridesRequest(agent_id="open", version=written.version), timeout=10
        )
        await stub(b).DeleteAgentOverrides(opb.DeleteAgentOverridesRequest(agent_id="open"), timeout=10)
        await until_effective(a, "open", "Code instructions.")
        assert await run(a, "open") == "system=[Code instructions.] tools=[]"
        listed = await stub(a).ListAgentOverrideVersions(
            opb.ListAgentOverrideVersionsRequest(agent_id="open"), timeout=10
        )
        assert [v.version for v in listed.versions] == [written.version + 2, written.version + 1, written.version]


async def test_the_policies_of_agentd_toml_hold_on_every_replica(replicas: dict[str, ServerProcess]) -> None:
    for name in "ab":
        async with grpc.aio.insecure_channel(replicas[name].addr) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub(channel).UpdateAgentOverrides(instructions("locked", "x"), timeout=10)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
            tools = opb.UpdateAgentOverridesRequest(
                overrides=opb.AgentOverrides(agent_id="descriptions", tools=opb.ToolSelection()),
                update_mask=field_mask_pb2.FieldMask(paths=["tools"]),
            )
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await stub(channel).UpdateAgentOverrides(tools, timeout=10)
            assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    async with grpc.aio.insecure_channel(replicas["a"].addr) as a:
        await stub(a).UpdateAgentOverrides(instructions("descriptions", "Allowed."), timeout=10)
        assert await run(a, "descriptions") == "system=[Allowed.] tools=[]"
