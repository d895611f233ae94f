"""`agentd serve` runs every thread but its event loop's SCHED_BATCH ([server]
batch_helper_threads, on by default): grpc's poller, event-engine and timer
threads, storage's executor. A helper that wakes then never preempts the
loop. Switched off, every thread keeps the default policy. Read from
/proc/<pid>/task and sched_getscheduler after a call was served."""

from __future__ import annotations

import os
import sys

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

from .serverproc import start_server

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="scheduling policies are Linux's")


def served_policies(env: dict[str, str]) -> tuple[int, dict[int, int]]:
    """The loop thread's policy and every other thread's, once a Generate was answered."""
    server = start_server(env=env)
    try:
        server.wait_serving(timeout=60)
        with grpc.insecure_channel(server.addr) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            assert stub.Generate(apb.GenerateRequest(agent_id="echo", text="hello"), timeout=30).text == "hello"
        pid = server.proc.pid
        policies = {int(tid): os.sched_getscheduler(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")}
    finally:
        assert server.stop() == 0, server.log_tail()
    # `agentd serve` runs its event loop on its main thread, whose id is the process's.
    return policies.pop(pid), policies


def test_every_thread_but_the_event_loops_runs_batch() -> None:
    loop, helpers = served_policies(dict(os.environ))
    assert loop == os.SCHED_OTHER
    assert len(helpers) >= 3  # grpc's poller, event-engine and timer threads at least
    assert set(helpers.values()) == {os.SCHED_BATCH}, helpers


def test_switched_off_every_thread_keeps_the_default_policy() -> None:
    loop, helpers = served_policies({**os.environ, "AGENTD_SERVER__BATCH_HELPER_THREADS": "false"})
    assert loop == os.SCHED_OTHER
    assert helpers and set(helpers.values()) == {os.SCHED_OTHER}, helpers
