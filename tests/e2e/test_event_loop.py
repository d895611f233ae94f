"""`agentd serve --loop`: auto (the default) serves on uvloop where it is
installed and on asyncio's loop where it is not, and either loop serves a run
over gRPC, streams included."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

from .serverproc import agentd_executable, start_server


def serve_and_check(extra_args: list[str], env: dict[str, str] | None = None) -> str:
    """Serves a Generate and a Stream; returns the start-up line naming the loop."""
    server = start_server(extra_args=extra_args, env=env)
    try:
        server.wait_serving(timeout=60)
        with grpc.insecure_channel(server.addr) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            assert stub.Generate(apb.GenerateRequest(agent_id="echo", text="one two three"), timeout=30).text == (
                "one two three"
            )
            deltas = [
                chunk.text_delta.text
                for message in stub.Stream(apb.StreamRequest(agent_id="echo", text="a b c d"), timeout=30)
                for chunk in message.chunks
                if chunk.WhichOneof("payload") == "text_delta"
            ]
            assert "".join(deltas) == "a b c d"
    finally:
        assert server.stop() == 0
    return next(line for line in server.log_text().splitlines() if "agentd serving on" in line)


@pytest.mark.parametrize(
    ("args", "loop"), [([], "uvloop"), (["--loop", "uvloop"], "uvloop"), (["--loop", "asyncio"], "asyncio")]
)
def test_serve_on_the_loop_asked_for(args: list[str], loop: str) -> None:
    assert serve_and_check(args).endswith(f"on {loop})")


def test_agentd_loop_in_the_environment_chooses_the_loop() -> None:
    assert serve_and_check([], env={**os.environ, "AGENTD_LOOP": "asyncio"}).endswith("on asyncio)")


def test_auto_serves_on_asyncio_where_uvloop_cannot_be_imported(tmp_path: Path) -> None:
    # A uvloop that is not there, as on a platform without a build of it.
    (tmp_path / "uvloop").mkdir()
    (tmp_path / "uvloop" / "__init__.py").write_text("raise ModuleNotFoundError('no uvloop here', name='uvloop')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}
    assert serve_and_check([], env=env).endswith("on asyncio)")
    explicit = subprocess.run(
        [str(agentd_executable()), "serve", "--loop", "uvloop", "--port", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert explicit.returncode == 2
    assert "--loop uvloop needs uvloop" in explicit.stderr


def test_an_unknown_loop_in_the_environment_is_refused() -> None:
    result = subprocess.run(
        [str(agentd_executable()), "serve", "--port", "0"],
        env={**os.environ, "AGENTD_LOOP": "trio"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "AGENTD_LOOP='trio': choose one of auto, uvloop, asyncio" in result.stderr
