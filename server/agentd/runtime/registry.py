"""The agents a server hosts, and the runs it has in flight."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from agentd.runtime.agent import Agent, RunInput, start_run
from agentd.runtime.agent_definition import input_to_messages
from agentd.runtime.background import BackgroundWork
from agentd.runtime.buffer import DEFAULT_LINGER
from agentd.runtime.errors import AlreadyExists, Unavailable, agent_not_found
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.overrides import InMemoryOverrideStore, Overrides
from agentd.runtime.run import RunHandle
from agentd.runtime.telemetry import Telemetry
from agentd.runtime.tools import Tool

log = logging.getLogger("agentd.runs")

#: Who started a run: (tenant, subject) of the caller.
Owner = tuple[str, str]

#: Runs whose end `wait_finished` still knows of once they are gone (the latest ones).
_ENDED_KEPT = 1000


class AgentRegistry:
    """The code's agents, and the editor overrides a run of one gets (`resolve`)."""

    def __init__(self, agents: Iterable[Agent] = (), overrides: Overrides | None = None) -> None:
        self._agents: dict[str, Agent] = {}
        for agent in agents:
            self.add(agent)
        self.overrides = overrides or Overrides(InMemoryOverrideStore(), self.tool_catalogue)

    def tool_catalogue(self) -> dict[str, Tool]:
        """The tools a membership override may give an agent: every hosted agent's own (first one wins)."""
        catalogue: dict[str, Tool] = {}
        for agent in self.list():
            for tool in agent.static_tools():
                catalogue.setdefault(tool.name, tool)
        return catalogue

    async def resolve(self, agent_id: str, tenant: str) -> Agent:
        """The agent a run in `tenant` gets: the code's with that tenant's overrides
        applied (NOT_FOUND for an unknown id)."""
        return await self.overrides.effective(self.get(agent_id), tenant)

    def resolve_now(self, agent_id: str, tenant: str) -> Agent | None:
        """`resolve` without a coroutine while the overrides are cached; None
        when they must be read (NOT_FOUND for an unknown id)."""
        agent = self._agents.get(agent_id)  # (no call into `get` for a known id)
        return self.overrides.effective_now(agent if agent is not None else self.get(agent_id), tenant)

    async def refresh(self, agent: Agent, tenant: str) -> Agent:
        """`agent` (resolved earlier, e.g. for a queued run) with the overrides as of now."""
        code = self._agents.get(agent.id)
        return agent if code is None else await self.overrides.effective(code, tenant)

    def add(self, agent: Agent) -> None:
        if agent.id in self._agents:
            raise AlreadyExists(f"agent {agent.id!r} defined twice", "AGENT_ALREADY_EXISTS")
        self._agents[agent.id] = agent

    def get(self, agent_id: str) -> Agent:
        try:
            return self._agents[agent_id]
        except KeyError:
            raise agent_not_found(agent_id) from None

    def list(self) -> list[Agent]:
        return sorted(self._agents.values(), key=lambda a: a.id)

    def __len__(self) -> int:
        return len(self._agents)


class RunRegistry:
    """Starts runs, tracks them until they end, and drains them on shutdown."""

    def __init__(self) -> None:
        self._runs: dict[str, RunHandle] = {}
        #: The runs' spans (off until the server enables tracing).
        self.telemetry = Telemetry()
        #: Where the runs' background tool calls go (the host sets it; None: in the foreground).
        self.background: BackgroundWork | None = None
        #: How long the readers that send a run's chunks on (Stream, the thread
        #: log) linger for more before a small batch (`ChunkBuffer.batches`; 0: never).
        self.linger = DEFAULT_LINGER
        #: How long each run's work for after it may take (`RunState.on_finish_timeout`).
        self.on_finish_timeout = RunHandle.on_finish_timeout
        self._accepting = True
        #: What `wait_finished` callers wait on, by run id (only while someone waits).
        self._waiting: dict[str, asyncio.Event] = {}
        #: The latest runs that ended (bounded: a long-lived server starts runs without end).
        self._ended: OrderedDict[str, None] = OrderedDict()
        #: Who started each run in flight that has no thread.
        self._owners: dict[str, Owner] = {}

    @property
    def accepting(self) -> bool:
        return self._accepting

    def start(
        self,
        agent: Agent,
        run_input: RunInput,
        options: ExecutionOptions | None = None,
        *,
        run_id: str | None = None,
        owner: Owner | None = None,
        in_caller: bool = False,
    ) -> RunHandle:
        """Starts a run. `owner` (a run without a thread: who started it) may
        abort it by its id (`abort_unbound`). `in_caller`: the run runs in its
        caller's task, when that awaits `RunHandle.run_to_end()`."""
        if not self._accepting:
            raise Unavailable("the server is shutting down; no new runs", "SERVER_SHUTDOWN")
        handle = start_run(
            agent,
            input_to_messages(run_input),
            options or ExecutionOptions(),
            run_id=run_id,
            telemetry=self.telemetry,
            in_caller=in_caller,
        )
        handle.background = self.background  # before the run's task first runs
        handle.on_finish_timeout = self.on_finish_timeout
        key = handle.run_id
        self._runs[key] = handle
        if owner is not None:
            self._owners[key] = owner

        def finished(_: Any) -> None:
            self._runs.pop(key, None)
            if owner is not None:
                self._owners.pop(key, None)
            ended = self._ended
            ended[key] = None
            if len(ended) > _ENDED_KEPT:  # (one in, at most one out)
                ended.popitem(last=False)
            if self._waiting:
                waiting = self._waiting.pop(key, None)
                if waiting is not None:
                    waiting.set()

        handle.when_ended(finished)
        return handle

    def get(self, run_id: str) -> RunHandle | None:
        return self._runs.get(run_id)

    def abort_unbound(self, run_id: str, owner: Owner) -> bool:
        """Aborts a run that has no thread (Generate or Stream without memory),
        found by its id; only its owner may. False for a run that ended (it is
        gone), one bound to a thread, or someone else's."""
        handle = self._runs.get(run_id)
        if handle is None or self._owners.get(run_id) != owner:
            return False
        return handle.abort("ABORTED", "aborted by request")

    def active(self) -> list[RunHandle]:
        return list(self._runs.values())

    async def wait_finished(self, run_id: str) -> None:
        """Test hook: returns once the run has ended (however it ended), or
        has yet to start and then ends; at once for one of the latest runs that ended."""
        if run_id in self._ended:
            return
        await self._waiting.setdefault(run_id, asyncio.Event()).wait()

    async def shutdown(self, grace: float) -> None:
        """Refuses new runs, lets runs finish within `grace` seconds, then
        aborts the rest with reason SERVER_SHUTDOWN."""
        self._accepting = False
        pending = [h for h in self._runs.values() if not h.done]
        if not pending:
            return
        tasks = [asyncio.ensure_future(h.result()) for h in pending]
        _, still = await asyncio.wait(tasks, timeout=grace)
        if still:
            log.info("aborting %d run(s) still going after the %.1fs grace period", len(still), grace)
            for handle in pending:
                handle.stop("SERVER_SHUTDOWN", "the server is shutting down")
            with contextlib.suppress(Exception):
                await asyncio.wait(tasks, timeout=5)
