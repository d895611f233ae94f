"""agentd through `buf curl`, which knows the schema only through server
reflection, asked under each of its names: `grpc.reflection.v1` (what buf
curl, grpcurl and most newer tools ask first) and `grpc.reflection.v1alpha`.

buf is the one `make setup` installs into the venv (it lints the protos)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .serverproc import ServerProcess, require_tool

BUF_HINT = "make setup (the dev extra installs buf into .venv/bin)"
RUN_TIMEOUT_S = 60


@pytest.fixture(scope="session")
def buf() -> str:
    return require_tool(str(Path(sys.executable).parent / "buf"), BUF_HINT)


def buf_curl(buf: str, server: ServerProcess, protocol: str, *args: str) -> str:
    cmd = [buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect-protocol", protocol, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"{cmd} exited {done.returncode}\n{done.stdout}\n{done.stderr}\n{server.log_tail()}"
    return done.stdout


@pytest.mark.parametrize("protocol", ["grpc-v1", "grpc-v1alpha"])
def test_each_reflection_protocol_lists_the_services_and_describes_a_call(
    buf: str, agentd_server: ServerProcess, protocol: str
) -> None:
    url = f"http://{agentd_server.addr}"
    listed = set(buf_curl(buf, agentd_server, protocol, "--list-services", url).split())
    # Both names are listed whichever is asked (test_grpcurl.py checks agentd's own services).
    assert {"grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"} <= listed
    assert "agentd.v1.AgentService" in listed

    # The request is written as JSON and the reply read back from the schema reflection sent.
    body = json.dumps({"agentId": "echo", "text": "hi there"})
    reply = json.loads(buf_curl(buf, agentd_server, protocol, "-d", body, f"{url}/agentd.v1.AgentService/Generate"))
    assert reply["text"] == "hi there"
