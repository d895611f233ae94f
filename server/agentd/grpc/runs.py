"""GenerateRequest and StreamRequest to the runtime's RunRequest."""

from __future__ import annotations

from agentd.grpc.authz import CALLER
from agentd.grpc.messages import run_input
from agentd.grpc.options import host_options, unset_options
from agentd.grpc.violations import Violations
from agentd.runtime.host import Host
from agentd.runtime.run_requests import RunRequest
from agentd_proto.v1 import agent_service_pb2 as apb


def run_request(host: Host, request: apb.GenerateRequest | apb.StreamRequest) -> RunRequest:
    """The validated request, or one INVALID_ARGUMENT listing every problem."""
    v = Violations()
    agent_id = request.agent_id
    if not agent_id:  # (v.require, asked here: no call when it is set)
        v.require(agent_id, "agent_id")
    messages = run_input(request.messages, request.text, v)
    who = CALLER.get()  # (caller(), without its frame)
    # Unset (most calls): not even an empty sub-message to look into.
    options = host_options(host, request.options, "options", v) if request.HasField("options") else unset_options(who)
    keep_running = type(request) is apb.StreamRequest and request.keep_running
    run = RunRequest(
        agent_id=agent_id,
        messages=messages,
        options=options,
        keep_running=keep_running,
        owner=(who.tenant, who.subject),
    )
    if keep_running and not run.thread_bound:
        v.add(
            "keep_running",
            "only a thread-bound run (options.memory with a thread) can outlive its call",
            "KEEP_RUNNING_REQUIRES_THREAD",
        )
    if v.items:  # (v.check, asked here: no call for a valid request)
        v.check()
    return run
