"""A request to run an agent, as Generate and Stream make it, and where it
starts: a thread-bound run on its thread (subscribers see it), any other in
the run registry."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentd.runtime.host import Host
from agentd.runtime.identity import DEFAULT_TENANT
from agentd.runtime.messages import Message
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.run import RunHandle


@dataclass(kw_only=True, slots=True)
class RunRequest:
    """Built once per call, then only read. Not frozen: a frozen dataclass
    sets each field through object.__setattr__, which doubled what building
    one costs on every Generate and Stream."""

    agent_id: str
    messages: tuple[Message, ...]
    options: ExecutionOptions = field(default_factory=ExecutionOptions)
    #: The run outlives its caller's call (only a thread-bound run can).
    keep_running: bool = False
    #: Who asks (tenant, subject): a run without a thread can be aborted by them, by its id.
    owner: tuple[str, str] | None = None

    @property
    def thread_bound(self) -> bool:
        return self.options.memory is not None and self.options.memory.thread is not None


async def start_run(host: Host, request: RunRequest, *, in_caller: bool = False) -> RunHandle:
    """Starts the run (NOT_FOUND for an unknown agent). `in_caller`: a run
    without a thread runs in the caller's task, as it awaits
    `RunHandle.run_to_end()` (a thread-bound run has a task of its own)."""
    tenant = request.owner[0] if request.owner is not None else DEFAULT_TENANT
    # The editor overrides as of now (no coroutine while they are cached).
    agent = host.agents.resolve_now(request.agent_id, tenant) or await host.agents.resolve(request.agent_id, tenant)
    if request.thread_bound:
        return await host.threads.start_run(agent, list(request.messages), request.options)
    # (start copies the messages into the run's list)
    return host.runs.start(agent, request.messages, request.options, owner=request.owner, in_caller=in_caller)
