"""An `--app` module's `setup(host)`: its agents use the server's own
backends. Over a real `agentd serve`: the app agent's memory lands in the
host's Redis storage (ThreadService lists it, Redis holds it under the
configured prefix), and its response cache is the host's (CacheService
counts the write and the hit)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import grpc

import redis
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc, cache_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import cache_service_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import thread_service_pb2 as tpb

from .serverproc import REPO_ROOT, start_server


def test_an_apps_memory_and_response_cache_are_the_hosts(tmp_path: Path, redis_server: Any) -> None:
    prefix = f"agentd-app:{tmp_path.name}:"
    cfg = tmp_path / "agentd.toml"
    cfg.write_text(
        f'[storage]\nbackend = "redis"\nredis_url = "{redis_server.url}"\nkey_prefix = "{prefix}"\n\n'
        '[cache]\nbackend = "memory"\n'
    )
    server = start_server(["--app", "tests.host_app"], config=cfg, log_dir=tmp_path)
    try:
        server.wait_serving(timeout=30)
        with grpc.insecure_channel(server.addr) as channel:
            agents = agent_service_pb2_grpc.AgentServiceStub(channel)
            memory = opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t-app"))
            reply = agents.Generate(apb.GenerateRequest(agent_id="app-memory", text="remember", options=memory))
            assert reply.text == "remember"
            listed = thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
                tpb.ListMessagesRequest(thread_id="t-app", resource_id="u1"), timeout=10
            )
            assert [m.parts[0].text.text for m in listed.messages] == ["remember", "remember"]

            cache = cache_service_pb2_grpc.CacheServiceStub(channel)
            before = cache.GetCacheStats(cpb.GetCacheStatsRequest(), timeout=10)
            for _ in range(2):
                assert (
                    agents.Generate(apb.GenerateRequest(agent_id="app-cached", text="once"), timeout=30).text == "once"
                )
            after = cache.GetCacheStats(cpb.GetCacheStatsRequest(), timeout=10)
            assert after.writes - before.writes >= 1 and after.hits - before.hits >= 1, (before, after)
    finally:
        assert server.stop() == 0, server.log_tail()
    with redis.Redis.from_url(redis_server.url) as client:
        assert client.keys(f"{prefix}*"), "the app's memory did not reach the host's Redis storage"


def test_a_setup_that_returns_no_agents_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "bad_setup.py").write_text("def setup(host):\n    return 'an agent'\n")
    cfg = tmp_path / "agentd.toml"
    cfg.write_text('[storage]\nbackend = "memory"\n')
    server = start_server(["--app", "bad_setup"], config=cfg, log_dir=tmp_path, cwd=tmp_path)
    assert server.proc.wait(timeout=60) == 2
    log = server.log_text()
    assert "configuration error: --app bad_setup: `setup(host)` must return a list of agentd.runtime.Agent" in log, log
    assert "Traceback" not in log


def test_the_readme_setup_example_serves_its_agent(tmp_path: Path) -> None:
    readme = (REPO_ROOT / "README.md").read_text()
    code = re.search(r"```python\n(# my_app.py: agentd serve --app my_app\n.*?)```", readme, re.S)
    assert code is not None, "the README's setup(host) example is gone"
    (tmp_path / "my_app.py").write_text(code.group(1))
    cfg = tmp_path / "agentd.toml"
    cfg.write_text('[storage]\nbackend = "memory"\n')
    server = start_server(["--app", "my_app"], config=cfg, log_dir=tmp_path, cwd=tmp_path)
    try:
        server.wait_serving(timeout=30)
        with grpc.insecure_channel(server.addr) as channel:
            agent = agent_service_pb2_grpc.AgentServiceStub(channel).GetAgent(
                apb.GetAgentRequest(agent_id="support"), timeout=10
            )
            assert agent.agent.model == "openai/gpt-4o-mini"
            assert list(agent.agent.input_processor_ids) == ["response-cache"]
    finally:
        assert server.stop() == 0, server.log_tail()
