"""Editor overrides over gRPC: the `editor` policy field by field, the mask,
the next run using what was written, GetAgent's effective view, the version
history (list, restore), who wrote each version and when, roles and tenants,
and the response cache's keys following an instruction override.

The agents run the `prompt/...` test model, whose reply is its system prompt
and its tools, so each test reads over the wire what a run was sent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.protobuf import field_mask_pb2

from agentd.grpc.auth import Authenticator, Credential, hash_token, identity
from agentd.grpc.gate import Gate
from agentd.runtime import Agent, ModelEvent, ModelRequest, register_provider
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.memory import Memory
from agentd.runtime.options import ProcessorSpec
from agentd.runtime.overrides import MAX_VERSIONS, InMemoryOverrideStore
from agentd.runtime.processors.catalogue import default_registry, with_response_cache
from agentd.runtime.storage import InMemoryStorage, StorageError
from agentd.runtime.tools import Tool
from agentd_proto.v1 import agent_overrides_pb2 as opb
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import rich_error
from support.polling import until
from support.server import Running, start_server
from support_models import PROMPT, FunctionModel, prompt_model

register_provider(PROMPT, prompt_model)


def _tool(name: str, description: str) -> Tool:
    return Tool(name, description, lambda args: {"ok": True})


SEARCH, LOOKUP, WEATHER = _tool("search", "Search the web"), _tool("lookup", "Look up a word"), _tool("weather", "Sky")
POLICIES: dict[str, object] = {
    "open": None,
    "locked": False,
    "instructions-only": {"instructions": True},
    "tools": {"tools": True},
    "descriptions-only": {"tools": {"description": True}},
}


def agents(store_policies: dict[str, object] = POLICIES) -> list[Agent]:
    made = [
        Agent(id=name, model="prompt/x", instructions="Code instructions.", tools=[SEARCH, LOOKUP], editor=policy)
        for name, policy in store_policies.items()
    ]
    return [*made, Agent(id="forecaster", model="prompt/x", tools=[WEATHER])]


@pytest.fixture
async def server() -> AsyncIterator[Running]:
    running = await start_server(agents())
    try:
        yield running
    finally:
        await running.close()


def update(agent_id: str, *paths: str, **values: object) -> opb.UpdateAgentOverridesRequest:
    overrides = opb.AgentOverrides(agent_id=agent_id, **values)  # type: ignore[arg-type]
    mask = field_mask_pb2.FieldMask(paths=list(paths)) if paths else None
    return opb.UpdateAgentOverridesRequest(overrides=overrides, update_mask=mask)


async def reply(server: Running, agent_id: str, text: str = "hi") -> str:
    return (await server.agents.Generate(apb.GenerateRequest(agent_id=agent_id, text=text))).text


# ---------------------------------------------------------------- the policy, field by field

#: (field, a value for it) as UpdateAgentOverrides sets it.
FIELD_VALUES: dict[str, dict[str, object]] = {
    "instructions": {"instructions": "Edited."},
    "tools": {"tools": opb.ToolSelection(names=["search"])},
    "tool_descriptions": {"tool_descriptions": {"search": "Find pages"}},
}
ALLOWED = {
    "open": {"instructions", "tools", "tool_descriptions"},
    "locked": set(),
    "instructions-only": {"instructions"},
    "tools": {"tools", "tool_descriptions"},
    "descriptions-only": {"tool_descriptions"},
}


@pytest.mark.parametrize("agent_id", list(POLICIES))
@pytest.mark.parametrize("field", list(FIELD_VALUES))
async def test_the_editor_policy_decides_each_field(server: Running, agent_id: str, field: str) -> None:
    request = update(agent_id, field, **FIELD_VALUES[field])
    if field in ALLOWED[agent_id]:
        written = (await server.agents.UpdateAgentOverrides(request)).overrides
        assert list(written.overridden_fields) == [field] and written.version == 1
        return
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.UpdateAgentOverrides(request)
    error = rich_error(info.value)
    assert error.code == grpc.StatusCode.PERMISSION_DENIED and error.reason == "EDITOR_FIELD_LOCKED"
    assert set(error.violations) == {f"overrides.{field}"}
    # Nothing was written: the run still gets the code's agent.
    assert (
        await server.agents.GetAgentOverrides(opb.GetAgentOverridesRequest(agent_id=agent_id))
    ).overrides.version == 0
    assert "Code instructions." in await reply(server, agent_id)


@pytest.mark.parametrize("path", ["id", "name", "model", "version", "updated_by", "update_time", "memory"])
async def test_code_owned_output_only_and_unknown_paths_are_invalid(server: Running, path: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.UpdateAgentOverrides(update("open", "instructions", path, instructions="x"))
    error = rich_error(info.value)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert set(error.violations) == {"update_mask.paths[1]"}
    if path in ("id", "name", "model"):
        assert "always comes from the agent's code" in error.violations["update_mask.paths[1]"]


async def test_unknown_tools_and_descriptions_of_tools_not_offered_are_invalid(server: Running) -> None:
    cases = [
        (update("open", "tools", tools=opb.ToolSelection(names=["search", "nope"])), "overrides.tools.names[1]"),
        (update("open", "tools", tools=opb.ToolSelection(names=["search", "search"])), "overrides.tools.names[1]"),
        (
            update("open", "tool_descriptions.nope", tool_descriptions={"nope": "x"}),
            "overrides.tool_descriptions['nope']",
        ),
        (update("open", "instructions", instructions="x" * 100_001), "overrides.instructions"),
    ]
    for request, field in cases:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await server.agents.UpdateAgentOverrides(request)
        error = rich_error(info.value)
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT and set(error.violations) == {field}, request
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.UpdateAgentOverrides(update("missing", "instructions", instructions="x"))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


# ---------------------------------------------------------------- the next run, and GetAgent


async def test_the_next_run_uses_the_overrides_and_get_agent_shows_them(server: Running) -> None:
    assert (
        await reply(server, "open")
        == "system=[Code instructions.] tools=[search: Search the web, lookup: Look up a word]"
    )
    before = (await server.agents.GetAgent(apb.GetAgentRequest(agent_id="open"))).agent
    assert (before.instructions, list(before.overridden_fields), before.overrides_version) == (
        "Code instructions.",
        [],
        0,
    )

    await server.agents.UpdateAgentOverrides(update("open", "instructions", instructions="Be brief."))
    # Tool membership may bring in another hosted agent's tool, and descriptions follow the membership.
    await server.agents.UpdateAgentOverrides(
        update(
            "open",
            "tools",
            "tool_descriptions.weather",
            tools=opb.ToolSelection(names=["weather", "search"]),
            tool_descriptions={"weather": "Tomorrow's sky"},
        )
    )
    assert await reply(server, "open") == "system=[Be brief.] tools=[weather: Tomorrow's sky, search: Search the web]"
    after = (await server.agents.GetAgent(apb.GetAgentRequest(agent_id="open"))).agent
    assert after.instructions == "Be brief." and after.overrides_version == 2
    assert list(after.overridden_fields) == ["instructions", "tools", "tool_descriptions"]
    assert [(t.name, t.description) for t in after.tools] == [
        ("weather", "Tomorrow's sky"),
        ("search", "Search the web"),
    ]
    listed = {a.id: a for a in (await server.agents.ListAgents(apb.ListAgentsRequest())).agents}
    assert listed["open"].instructions == "Be brief." and listed["locked"].instructions == "Code instructions."
    # An empty selection is an override too: no tools at all.
    await server.agents.UpdateAgentOverrides(update("open", "tools", "tool_descriptions", tools=opb.ToolSelection()))
    assert await reply(server, "open") == "system=[Be brief.] tools=[]"


async def test_the_mask_writes_only_what_it_names(server: Running) -> None:
    agents_ = server.agents
    await agents_.UpdateAgentOverrides(
        update("open", tool_descriptions={"search": "Find", "lookup": "Define"}, instructions="One.")
    )  # no mask: every populated field
    current = (await agents_.GetAgentOverrides(opb.GetAgentOverridesRequest(agent_id="open"))).overrides
    assert current.instructions == "One." and dict(current.tool_descriptions) == {"search": "Find", "lookup": "Define"}
    # A map key: that description only; named without a value, it is removed.
    await agents_.UpdateAgentOverrides(update("open", "tool_descriptions.lookup", "instructions"))
    current = (await agents_.GetAgentOverrides(opb.GetAgentOverridesRequest(agent_id="open"))).overrides
    assert not current.HasField("instructions") and dict(current.tool_descriptions) == {"search": "Find"}
    assert list(current.overridden_fields) == ["tool_descriptions"]
    assert await reply(server, "open") == "system=[Code instructions.] tools=[search: Find, lookup: Look up a word]"
    deleted = (await agents_.DeleteAgentOverrides(opb.DeleteAgentOverridesRequest(agent_id="open"))).overrides
    assert deleted.version == 3 and list(deleted.overridden_fields) == []
    assert (
        await reply(server, "open")
        == "system=[Code instructions.] tools=[search: Search the web, lookup: Look up a word]"
    )


async def test_fields_the_code_now_owns_are_removed_from_saved_overrides() -> None:
    """Overrides written while a field was editable stop applying once a deploy
    locks it: not shown, not applied, and not carried into the next version."""
    store = InMemoryOverrideStore()
    first = await start_server(agents({"tools": None}), override_store=store)  # everything editable
    try:
        await first.agents.UpdateAgentOverrides(
            update("tools", "instructions", "tool_descriptions", instructions="Old.", tool_descriptions={"search": "S"})
        )
    finally:
        await first.close()
    # `tools` became descriptions-only and its instructions read-only.
    locked = await start_server(agents({"tools": {"tools": {"description": True}}}), override_store=store)
    try:
        current = (await locked.agents.GetAgentOverrides(opb.GetAgentOverridesRequest(agent_id="tools"))).overrides
        assert not current.HasField("instructions") and list(current.overridden_fields) == ["tool_descriptions"]
        assert await reply(locked, "tools") == "system=[Code instructions.] tools=[search: S, lookup: Look up a word]"
        written = await locked.agents.UpdateAgentOverrides(
            update("tools", "tool_descriptions.lookup", tool_descriptions={"lookup": "L"})
        )
        assert (await store.head("tools")).values.instructions is None  # type: ignore[union-attr]
        assert dict(written.overrides.tool_descriptions) == {"search": "S", "lookup": "L"}
    finally:
        await locked.close()


# ---------------------------------------------------------------- history, restore, who and when


async def test_versions_are_listed_newest_first_and_restored_as_a_new_version(server: Running) -> None:
    stub = server.agents
    started = datetime.now(UTC)
    for text in ("v1", "v2", "v3"):
        await stub.UpdateAgentOverrides(update("open", "instructions", instructions=text))
    first = await stub.ListAgentOverrideVersions(opb.ListAgentOverrideVersionsRequest(agent_id="open", page_size=2))
    assert [(v.version, v.instructions) for v in first.versions] == [(3, "v3"), (2, "v2")] and first.next_page_token
    rest = await stub.ListAgentOverrideVersions(
        opb.ListAgentOverrideVersionsRequest(agent_id="open", page_size=2, page_token=first.next_page_token)
    )
    assert [(v.version, v.instructions) for v in rest.versions] == [(1, "v1")] and not rest.next_page_token
    for version in [*first.versions, *rest.versions]:
        assert version.updated_by == "anonymous"  # no authentication: the anonymous caller
        assert started <= version.update_time.ToDatetime(tzinfo=UTC) <= datetime.now(UTC)

    restored = (
        await stub.RestoreAgentOverrides(opb.RestoreAgentOverridesRequest(agent_id="open", version=1))
    ).overrides
    assert (restored.version, restored.instructions) == (4, "v1")
    assert await reply(server, "open") == "system=[v1] tools=[search: Search the web, lookup: Look up a word]"
    for bad, code in ((9, grpc.StatusCode.NOT_FOUND), (0, grpc.StatusCode.INVALID_ARGUMENT)):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.RestoreAgentOverrides(opb.RestoreAgentOverridesRequest(agent_id="open", version=bad))
        assert info.value.code() == code
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.ListAgentOverrideVersions(
            opb.ListAgentOverrideVersionsRequest(agent_id="locked", page_token=first.next_page_token)
        )
    assert rich_error(info.value).violations.keys() == {"page_token"}  # a token of another agent's list


async def test_history_is_bounded(server: Running) -> None:
    for n in range(MAX_VERSIONS + 5):
        await server.agents.UpdateAgentOverrides(update("open", "instructions", instructions=f"v{n + 1}"))
    listed = await server.agents.ListAgentOverrideVersions(
        opb.ListAgentOverrideVersionsRequest(agent_id="open", page_size=1000)
    )
    assert [v.version for v in listed.versions] == list(range(MAX_VERSIONS + 5, 5, -1))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await server.agents.RestoreAgentOverrides(opb.RestoreAgentOverridesRequest(agent_id="open", version=5))
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


# ---------------------------------------------------------------- roles, subjects and tenants

TOKENS = {
    ("acme", "admin"): "agentd_acme-admin-0123456789abcdefg",
    ("acme", "writer"): "agentd_acme-writer-0123456789abcde",
    ("acme", "reader"): "agentd_acme-reader-0123456789abcde",
    ("globex", "admin"): "agentd_globex-admin-0123456789abc",
}


@pytest.fixture
async def secured() -> AsyncIterator[Running]:
    credentials = [
        Credential(hash_token(token), identity(tenant, f"{tenant}-{role}", [role], ["*"], "token", "test"))
        for (tenant, role), token in TOKENS.items()
    ]
    cache = InMemoryServerCache()
    running = await start_server(
        agents(), caches={"memory": cache}, gate=Gate(Authenticator(("token",), tokens=credentials), cache=cache)
    )
    try:
        yield running
    finally:
        await running.close()


def as_(tenant: str, role: str) -> tuple[tuple[str, str]]:
    return (("authorization", f"Bearer {TOKENS[tenant, role]}"),)


async def test_only_admin_writes_each_version_names_its_writer_and_tenants_are_apart(secured: Running) -> None:
    stub = secured.agents
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.UpdateAgentOverrides(
            update("open", "instructions", instructions="x"), metadata=as_("acme", "writer")
        )
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED and rich_error(info.value).reason == "ROLE_REQUIRED"

    written = await stub.UpdateAgentOverrides(
        update("open", "instructions", instructions="Acme's."), metadata=as_("acme", "admin")
    )
    assert written.overrides.updated_by == "acme-admin"
    read = await stub.GetAgentOverrides(opb.GetAgentOverridesRequest(agent_id="open"), metadata=as_("acme", "reader"))
    assert (read.overrides.instructions, read.overrides.updated_by) == ("Acme's.", "acme-admin")
    acme = await stub.Generate(apb.GenerateRequest(agent_id="open", text="hi"), metadata=as_("acme", "writer"))
    assert acme.text.startswith("system=[Acme's.]")

    # Another tenant's runs get the code's agent, and its own overrides are its own.
    globex = await stub.Generate(apb.GenerateRequest(agent_id="open", text="hi"), metadata=as_("globex", "admin"))
    assert globex.text.startswith("system=[Code instructions.]")
    theirs = await stub.GetAgentOverrides(
        opb.GetAgentOverridesRequest(agent_id="open"), metadata=as_("globex", "admin")
    )
    assert theirs.overrides.version == 0
    agent = await stub.GetAgent(apb.GetAgentRequest(agent_id="open"), metadata=as_("globex", "admin"))
    assert agent.agent.instructions == "Code instructions." and agent.agent.overrides_version == 0


# ---------------------------------------------------------------- the response cache


async def test_an_instruction_override_changes_the_response_cache_key() -> None:
    cache = InMemoryServerCache()
    registry = with_response_cache(default_registry(), {"memory": cache})
    cached = registry.build(ProcessorSpec("response-cache", options={"agentId": "cached", "ttl": 600}))
    agent = Agent(id="cached", model="prompt/x", instructions="Code instructions.", input_processors=[cached])
    server = await start_server([agent], caches={"memory": cache})
    try:
        assert await reply(server, "cached") == "system=[Code instructions.] tools=[]"
        assert (cache.stats.hits, cache.stats.writes) == (0, 1)
        assert await reply(server, "cached") == "system=[Code instructions.] tools=[]"
        assert (cache.stats.hits, cache.stats.writes) == (1, 1)  # a hit: the same key
        await server.agents.UpdateAgentOverrides(update("cached", "instructions", instructions="Overridden."))
        # A new key: the model is asked again (a hit would answer with the code's instructions).
        assert await reply(server, "cached") == "system=[Overridden.] tools=[]"
        assert (cache.stats.hits, cache.stats.writes) == (1, 2)
        await server.agents.DeleteAgentOverrides(opb.DeleteAgentOverridesRequest(agent_id="cached"))
        assert await reply(server, "cached") == "system=[Code instructions.] tools=[]"
        assert (cache.stats.hits, cache.stats.writes) == (2, 2)  # back to the first key
    finally:
        await server.close()


# ---------------------------------------------------------------- a storage outage


class OutageOverrideStore(InMemoryOverrideStore):
    """The in-memory store, every call of which fails while `down` is set."""

    down = False

    def __getattribute__(self, name: str) -> Any:
        value = super().__getattribute__(name)
        if name in ("head", "version", "versions", "append") and object.__getattribute__(self, "down"):

            async def refused(*args: Any, **kwargs: Any) -> Any:
                raise StorageError("connection refused")

            return refused
        return value


async def test_a_storage_outage_is_unavailable_and_runs_keep_the_version_read_before() -> None:
    store = OutageOverrideStore()
    server = await start_server(agents(), override_store=store, overrides_cache_ttl=0)
    try:
        await server.agents.UpdateAgentOverrides(update("open", "instructions", instructions="Edited."))
        store.down = True
        # Read before (the write's own version): runs go on with it, though the cache entry expired.
        assert (await reply(server, "open")).startswith("system=[Edited.]")
        for call in (
            server.agents.UpdateAgentOverrides(update("open", "instructions", instructions="x")),
            server.agents.ListAgentOverrideVersions(opb.ListAgentOverrideVersionsRequest(agent_id="open")),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await call
            error = rich_error(info.value)
            assert (error.code, error.reason) == (grpc.StatusCode.UNAVAILABLE, "STORAGE_UNAVAILABLE")
        assert (await reply(server, "locked")).startswith("system=[Code instructions.]")  # locked: nothing to read
        # Read at start-up (it has none): a run needs no storage for it.
        assert (await reply(server, "tools")).startswith("system=[Code instructions.]")
        store.down = False
        assert (await reply(server, "tools")).startswith("system=[Code instructions.]")
    finally:
        await server.close()


# ---------------------------------------------------------------- a run queued before the write

GATE: dict[str, asyncio.Event] = {}


async def _gated_prompt(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
    """Reveals the prompt as `prompt/...` does; a turn saying "wait" first waits for GATE["open"]."""
    if request.prompt[-1].text == "wait":
        await GATE["open"].wait()
    async for event in prompt_model("x").stream(request):
        yield event


async def test_a_run_queued_before_a_write_starts_with_the_write() -> None:
    GATE["open"] = asyncio.Event()
    register_provider("gated", lambda model_id: FunctionModel(_gated_prompt, provider="gated", model_id=model_id))
    storage = InMemoryStorage()
    agent = Agent(id="chat", model="gated/x", instructions="Code instructions.", memory=Memory(storage))
    server = await start_server([agent], storage=storage)
    target = spb.SignalTarget(resource_id="u1", thread_id="t1")
    try:
        woke = await server.signals.SendMessage(
            sspb.SendMessageRequest(agent_id="chat", target=target, message=spb.MessageInput(text="wait"))
        )
        assert woke.decision.WhichOneof("action") == "wake"
        queued = await server.signals.QueueMessage(
            sspb.QueueMessageRequest(agent_id="chat", target=target, message=spb.MessageInput(text="next"))
        )
        assert queued.decision.WhichOneof("action") == "deliver"
        await server.agents.UpdateAgentOverrides(update("chat", "instructions", instructions="Written meanwhile."))
        GATE["open"].set()

        async def answers_so_far() -> list[mpb.Message]:
            listed = await server.threads.ListMessages(tpb.ListMessagesRequest(thread_id="t1", resource_id="u1"))
            return [m for m in listed.messages if m.role == mpb.ROLE_ASSISTANT]

        answers = await until(answers_so_far, holds=lambda got: len(got) == 2, what="both runs to answer")
        texts = ["".join(p.text.text for p in m.parts) for m in answers]
        assert texts[0].startswith("system=[Code instructions.]")  # started before the write
        assert texts[1].startswith("system=[Written meanwhile.]")
    finally:
        await server.close()
