"""`agentd serve` configured from the environment, as a container would run
it: the storage backend and its Redis come from AGENTD_STORAGE__* over the
file's SQLite; a bad variable stops the server with a message naming it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import grpc

import redis
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb

from .serverproc import start_server

CONFIG = """
[storage]
backend = "sqlite"
path = "{db}"

[[agents]]
id = "chat"
model = "local/echo"
memory = {{ last_messages = 10 }}
"""


def test_the_storage_backend_and_its_redis_come_from_the_environment(tmp_path: Path, redis_server: Any) -> None:
    db = tmp_path / "never.db"
    cfg = tmp_path / "agentd.toml"
    cfg.write_text(CONFIG.format(db=db))
    prefix = f"agentd-env:{tmp_path.name}:"
    env = dict(
        os.environ,
        AGENTD_STORAGE__BACKEND="redis",
        AGENTD_STORAGE__REDIS_URL=redis_server.url,
        AGENTD_STORAGE__KEY_PREFIX=prefix,
    )
    server = start_server(config=cfg, env=env, log_dir=tmp_path)
    try:
        server.wait_serving(timeout=30)
        with grpc.insecure_channel(server.addr) as channel:
            reply = agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(
                    agent_id="chat",
                    text="kept in redis",
                    options=opb.ExecutionOptions(memory=opb.MemoryOptions(resource="u1", thread_id="t-env")),
                ),
                timeout=30,
            )
        assert reply.text == "kept in redis"
    finally:
        assert server.stop() == 0, server.log_tail()
    with redis.Redis.from_url(redis_server.url) as client:
        assert client.keys(f"{prefix}*"), "nothing was stored under the prefix the environment gave"
    assert not db.exists(), "the file's SQLite storage was opened although the environment chose Redis"


def test_a_bad_variable_stops_the_server_naming_it(tmp_path: Path) -> None:
    cfg = tmp_path / "agentd.toml"
    cfg.write_text(CONFIG.format(db=tmp_path / "a.db"))
    server = start_server(config=cfg, env=dict(os.environ, AGENTD_STORAGE__BACKEND="disk"), log_dir=tmp_path)
    assert server.proc.wait(timeout=60) == 2
    log = server.log_text()
    assert (
        "agentd: configuration error: storage.backend (from AGENTD_STORAGE__BACKEND): "
        "'disk' is not sqlite, memory or redis" in log
    ), log
    assert "Traceback" not in log
