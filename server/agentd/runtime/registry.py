"""The agents a server hosts, and the runs it has in flight."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from agentd.runtime.agent import Agent, RunInput
from agentd.runtime.errors import AlreadyExists, Unavailable, agent_not_found
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.run import RunHandle
from agentd.runtime.telemetry import Telemetry

log = logging.getLogger("agentd.runs")

#: How many finished runs' ids the registry remembers, for a wait that comes after the run.
RECENTLY_FINISHED = 1024


class AgentRegistry:
    def __init__(self, agents: Iterable[Agent] = ()) -> None:
        self._agents: dict[str, Agent] = {}
        for agent in agents:
            self.add(agent)

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
        self._accepting = True
        #: Only for the runs someone waits for, until they end.
        self._waiters: dict[str, asyncio.Event] = {}
        #: The last RECENTLY_FINISHED runs' ids, oldest first: bounded, since a
        #: server runs without end.
        self._finished: OrderedDict[str, None] = OrderedDict()

    @property
    def accepting(self) -> bool:
        return self._accepting

    def start(
        self, agent: Agent, run_input: RunInput, options: ExecutionOptions | None = None, *, run_id: str | None = None
    ) -> RunHandle:
        if not self._accepting:
            raise Unavailable("the server is shutting down; no new runs", "SERVER_SHUTDOWN")
        handle: RunHandle = agent.stream(run_input, options, run_id=run_id, telemetry=self.telemetry)
        self._runs[handle.run_id] = handle
        assert handle._task is not None

        def finished(_: Any) -> None:
            self._runs.pop(handle.run_id, None)
            self._finished[handle.run_id] = None
            if len(self._finished) > RECENTLY_FINISHED:
                self._finished.popitem(last=False)
            waiter = self._waiters.pop(handle.run_id, None)
            if waiter is not None:
                waiter.set()

        handle._task.add_done_callback(finished)
        return handle

    def get(self, run_id: str) -> RunHandle | None:
        return self._runs.get(run_id)

    def active(self) -> list[RunHandle]:
        return list(self._runs.values())

    async def wait_finished(self, run_id: str) -> None:
        """Test hook: returns once the run has ended (however it ended), also
        when it ended a while ago (one of the last RECENTLY_FINISHED)."""
        if run_id in self._finished:
            return
        await self._waiters.setdefault(run_id, asyncio.Event()).wait()

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
                handle.abort("SERVER_SHUTDOWN", "the server is shutting down")
            with contextlib.suppress(Exception):
                await asyncio.wait(tasks, timeout=5)
