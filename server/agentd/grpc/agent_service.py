"""AgentService: translates requests to runtime calls and results back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from agentd.grpc import paging
from agentd.grpc.authz import caller, check_id_chars
from agentd.grpc.chunks import MAX_BATCH_BYTES, add_chunks, sized
from agentd.grpc.errors import Context
from agentd.grpc.overrides import overrides_to_pb, update_from_pb
from agentd.grpc.results import result_to_pb
from agentd.grpc.runs import run_request
from agentd.grpc.scores import next_page_token, score_query, score_to_pb
from agentd.grpc.values import from_struct, to_struct
from agentd.grpc.violations import Violations
from agentd.grpc.walk import map_strings
from agentd.runtime.agent import CALLER_CANCELLED, Agent
from agentd.runtime.chunks import Chunk, Error
from agentd.runtime.errors import BACKEND_RETRY_SECONDS, AgentdError, FailedPrecondition, InvalidArgument, Unavailable
from agentd.runtime.host import Host
from agentd.runtime.lanes import resolve_error_processors
from agentd.runtime.lazy import lazy
from agentd.runtime.overrides import OverrideVersion, instructions_text
from agentd.runtime.redact import redact
from agentd.runtime.run import RunResult
from agentd.runtime.run_requests import start_run
from agentd_proto.v1 import agent_overrides_pb2 as opb
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import score_pb2 as spb

if TYPE_CHECKING:
    from agentd.runtime.workflows import definition as workflow_definition
else:
    workflow_definition = lazy("agentd.runtime.workflows.definition")  # with the first agent described

#: Most chunks one StreamResponse carries.
MAX_BATCH = 512


def agent_to_pb(agent: Agent, overrides: OverrideVersion | None = None) -> apb.Agent:
    """`agent` as runs get it (editor overrides applied), and the `overrides` in effect."""
    return apb.Agent(
        id=agent.id,
        name=agent.name,
        description=agent.description,
        metadata=to_struct(agent.static_metadata()),
        model=agent.static_model(),
        tools=[
            apb.ToolInfo(
                name=t.name, description=t.description, input_schema=to_struct(t.input_schema), source=t.source
            )
            for t in agent.static_tools()
        ]
        + [  # each workflow the agent runs is a tool named by its id
            apb.ToolInfo(name=w.id, description=w.description, input_schema=to_struct(w.input_schema))
            for w in workflow_definition.static_workflows(agent)
        ],
        input_processor_ids=agent.static_processor_ids("input"),
        output_processor_ids=agent.static_processor_ids("output"),
        error_processor_ids=resolved_error_processor_ids(agent),
        sub_agent_ids=[] if callable(agent.agents) else [a.id for a in agent.agents.values()],
        memory_enabled=agent.memory is not None,
        instructions=instructions_text(agent),
        overridden_fields=overrides.values.fields if overrides is not None else [],
        overrides_version=overrides.version if overrides is not None else 0,
    )


def resolved_error_processor_ids(agent: Agent) -> list[str]:
    """The error lane as runs resolve it (defaults merged in)."""
    if callable(agent.error_processors):
        return []
    return [
        p.id
        for p in resolve_error_processors(list(agent.error_processors), defaults_enabled=agent.error_processor_defaults)
    ]


def _matches(agent: Agent, wanted: dict[str, Any]) -> bool:
    metadata = agent.static_metadata()
    return all(key in metadata and metadata[key] == value for key, value in wanted.items())


def batch_responses(chunks: list[Chunk], budget: int = MAX_BATCH_BYTES) -> list[apb.StreamResponse]:
    """Responses for a batch: one per run (nested sub-agent chunks are their own
    run), each split in halves while it is over `budget` bytes."""
    out: list[apb.StreamResponse] = []
    start = 0
    for i in range(1, len(chunks) + 1):
        if i == len(chunks) or chunks[i].run_id != chunks[start].run_id:
            out.extend(sized(_stream_response, chunks[start:i], budget))
            start = i
    return out


def _stream_response(chunks: Sequence[Chunk]) -> apb.StreamResponse:
    response = apb.StreamResponse()
    add_chunks(response.chunks, chunks)
    return response


def run_error(error: Error) -> AgentdError:
    """The status a failed run answers Generate with."""
    metadata = {"run_reason": error.reason}
    if error.status_code:
        metadata["status_code"] = str(error.status_code)
    if error.provider_code:
        metadata["provider_code"] = error.provider_code
    if error.reason == "PROCESSOR_UNAVAILABLE":
        return Unavailable(error.message, error.reason, metadata)
    if error.reason == "STORAGE_UNAVAILABLE":
        return Unavailable(error.message, error.reason, metadata, retry_after=BACKEND_RETRY_SECONDS)
    if error.reason == "MODEL_ERROR":
        metadata["retryable"] = str(error.retryable).lower()
        if error.retryable:
            return Unavailable(error.message, "MODEL_ERROR", metadata)
        return FailedPrecondition(error.message, "MODEL_ERROR", metadata)
    return FailedPrecondition(error.message, error.reason, metadata)


R = TypeVar("R", apb.ListAgentsResponse, apb.GetAgentResponse)


def _redacted(reply: R) -> R:
    """An agent's definition may carry a key (provider options): never in a reply."""
    map_strings(reply, redact)
    return reply


def _redacted_overrides(overrides: opb.AgentOverrides) -> opb.AgentOverrides:
    """Instructions an operator wrote may quote a configured secret: never in a reply."""
    map_strings(overrides, redact)
    return overrides


class AgentService(agent_service_pb2_grpc.AgentServiceServicer):
    def __init__(self, host: Host, batch_bytes: int = MAX_BATCH_BYTES) -> None:
        self.host = host
        #: What a StreamResponse is split under (see agentd.grpc.chunks.batch_budget).
        self.batch_bytes = batch_bytes

    async def ListAgents(self, request: apb.ListAgentsRequest, context: Context) -> apb.ListAgentsResponse:
        v = Violations()
        size = paging.page_size(request.page_size, "page_size", v)
        after = paging.decode("agents", request.page_token)
        v.check()
        wanted = from_struct(request.metadata_filter) if request.HasField("metadata_filter") else {}
        agents = [a for a in self.host.agents.list() if _matches(a, wanted) and (after is None or a.id > after)]
        page = agents[:size]
        token = paging.encode("agents", page[-1].id) if len(agents) > size else ""
        described = [await self._described(a) for a in page]
        return _redacted(apb.ListAgentsResponse(agents=described, next_page_token=token))

    async def GetAgent(self, request: apb.GetAgentRequest, context: Context) -> apb.GetAgentResponse:
        agent = self._agent(request.agent_id)
        return _redacted(apb.GetAgentResponse(agent=await self._described(agent)))

    async def _described(self, agent: Agent) -> apb.Agent:
        """The agent as the caller's tenant's runs get it."""
        overrides = self.host.agents.overrides
        tenant = caller().tenant
        return agent_to_pb(await overrides.effective(agent, tenant), await overrides.current(agent, tenant))

    def _agent(self, agent_id: str, field: str = "agent_id") -> Agent:
        v = Violations()
        v.require(agent_id, field)
        v.check()
        check_id_chars(agent_id, field)
        return self.host.agents.get(agent_id)

    # ------------------------------------------------------------ editor overrides

    async def GetAgentOverrides(
        self, request: opb.GetAgentOverridesRequest, context: Context
    ) -> opb.GetAgentOverridesResponse:
        agent = self._agent(request.agent_id)
        current = await self.host.agents.overrides.current(agent, caller().tenant)
        return opb.GetAgentOverridesResponse(overrides=_redacted_overrides(overrides_to_pb(agent.id, current)))

    async def UpdateAgentOverrides(
        self, request: opb.UpdateAgentOverridesRequest, context: Context
    ) -> opb.UpdateAgentOverridesResponse:
        agent = self._agent(request.overrides.agent_id, "overrides.agent_id")
        who = caller()
        made = await self.host.agents.overrides.update(agent, who.tenant, update_from_pb(request), who.subject)
        return opb.UpdateAgentOverridesResponse(overrides=_redacted_overrides(overrides_to_pb(agent.id, made)))

    async def DeleteAgentOverrides(
        self, request: opb.DeleteAgentOverridesRequest, context: Context
    ) -> opb.DeleteAgentOverridesResponse:
        agent = self._agent(request.agent_id)
        who = caller()
        made = await self.host.agents.overrides.delete(agent, who.tenant, who.subject)
        return opb.DeleteAgentOverridesResponse(overrides=overrides_to_pb(agent.id, made))

    async def ListAgentOverrideVersions(
        self, request: opb.ListAgentOverrideVersionsRequest, context: Context
    ) -> opb.ListAgentOverrideVersionsResponse:
        v = Violations()
        size = paging.page_size(request.page_size, "page_size", v)
        below = paging.decode(f"override-versions:{request.agent_id}", request.page_token)
        v.check()
        agent = self._agent(request.agent_id)
        if below is not None and not isinstance(below, int):
            raise InvalidArgument.field("page_token", "is not a page token this list issued")
        found = await self.host.agents.overrides.versions(agent, caller().tenant, below, size + 1)
        page = found[:size]
        token = paging.encode(f"override-versions:{agent.id}", page[-1].version) if len(found) > size else ""
        return opb.ListAgentOverrideVersionsResponse(
            versions=[_redacted_overrides(overrides_to_pb(agent.id, o)) for o in page], next_page_token=token
        )

    async def RestoreAgentOverrides(
        self, request: opb.RestoreAgentOverridesRequest, context: Context
    ) -> opb.RestoreAgentOverridesResponse:
        agent = self._agent(request.agent_id)
        who = caller()
        made = await self.host.agents.overrides.restore(agent, who.tenant, request.version, who.subject)
        return opb.RestoreAgentOverridesResponse(overrides=_redacted_overrides(overrides_to_pb(agent.id, made)))

    async def Generate(self, request: apb.GenerateRequest, context: Context) -> apb.GenerateResponse:
        # A run without a thread runs in this call's task: its cancellation ends the run CALLER_CANCELLED.
        run = run_request(self.host, request)
        handle = await start_run(self.host, run, in_caller=True)
        try:
            result: RunResult = await handle.run_to_end()
            if run.thread_bound:  # the thread is free (or handed on) when we answer
                await self.host.threads.settled(handle.run_id)
        except asyncio.CancelledError:
            handle.abort(*CALLER_CANCELLED)
            raise
        if result.error is not None:
            raise run_error(result.error)
        if result.aborted is not None:
            reason = result.aborted.reason
            if reason == "SERVER_SHUTDOWN":
                raise Unavailable(result.aborted.message, reason)
            raise FailedPrecondition(result.aborted.message, reason)
        return result_to_pb(result)

    async def Stream(self, request: apb.StreamRequest, context: Context) -> AsyncIterator[apb.StreamResponse]:
        run = run_request(self.host, request)
        handle = await start_run(self.host, run)
        try:
            await handle.ready()
            # The run appends to its buffer at its own pace; each pass takes
            # everything that is ready (lingering briefly while the run outpaces
            # the stream), so a fast run or a slow reader gets few large messages.
            async for batch in handle.buffer.batches(max_batch=MAX_BATCH, linger=self.host.runs.linger):
                for response in batch_responses(batch, self.batch_bytes):
                    yield response
            if run.thread_bound:  # the thread is free (or handed on) when the stream ends
                await self.host.threads.settled(handle.run_id)
        finally:
            if not handle.done and not run.keep_running:
                handle.abort(*CALLER_CANCELLED)

    async def ListScores(self, request: spb.ListScoresRequest, context: Context) -> spb.ListScoresResponse:
        v = Violations()
        query, kind = score_query(request, v)
        page = await self.host.score_store.list(query)
        who = caller()
        # A caller limited to some resources sees the scores of those alone (a page may come up short).
        scores = [s for s in page.scores if who.all_resources or who.may_act_for(who.unscoped(s.resource_id))]
        return spb.ListScoresResponse(
            scores=[score_to_pb(s) for s in scores], next_page_token=next_page_token(kind, page.next_cursor)
        )
