"""agentd through grpcurl: server reflection, health and JSON transcoding.

grpcurl is taken from <repo>/.tools/bin/grpcurl, or from $AGENTD_GRPCURL.
It knows the agentd.v1 schema only through the server's reflection service.
It prints each response message as one JSON document with the proto field
names (run_id, text_delta, ...); 64-bit integers are JSON strings.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest

from .serverproc import REPO_ROOT, ServerProcess, require_tool

GRPCURL_VERSION = "v1.9.3"
GRPCURL_HINT = "make tools (or point AGENTD_GRPCURL at a grpcurl binary)"
RUN_TIMEOUT_S = 60

AGENTD_SERVICES = (
    "agentd.v1.AgentService",
    "agentd.v1.ThreadService",
    "agentd.v1.SignalService",
    "agentd.v1.CacheService",
)


@pytest.fixture(scope="session")
def grpcurl() -> str:
    path = os.environ.get("AGENTD_GRPCURL") or str(REPO_ROOT / ".tools" / "bin" / "grpcurl")
    return require_tool(path, GRPCURL_HINT)


def test_grpcurl_reports_its_version(grpcurl: str) -> None:
    """`make tools` stamps the version in (a plain `go install` says `dev build <no version set>`)."""
    done = subprocess.run([grpcurl, "-version"], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    assert f"grpcurl {GRPCURL_VERSION}" in done.stdout + done.stderr, done


def run_grpcurl(grpcurl: str, server: ServerProcess, *args: str) -> subprocess.CompletedProcess[str]:
    """`grpcurl -plaintext -max-time 30 [args...] ADDR [verb/method...]`.

    `args` are the options followed by the positional arguments after the
    address; "--" separates them.
    """
    if "--" in args:
        split = args.index("--")
        options, positional = args[:split], args[split + 1 :]
    else:
        options, positional = (), args
    cmd = [grpcurl, "-plaintext", "-max-time", "30", *options, server.addr, *positional]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)


def ok_output(result: subprocess.CompletedProcess[str], server: ServerProcess) -> str:
    assert result.returncode == 0, (
        f"{result.args} exited with {result.returncode}\n--- stdout ---\n{result.stdout}\n"
        f"--- stderr ---\n{result.stderr}\n{server.log_tail()}"
    )
    return result.stdout


def json_documents(text: str) -> list[Any]:
    """The JSON documents grpcurl prints one after another (one per message)."""
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return docs
        doc, pos = decoder.raw_decode(text, pos)
        docs.append(doc)


def test_json_documents_parses_concatenated_objects() -> None:
    assert json_documents('{\n  "a": 1\n}\n{\n  "b": [2]\n}\n') == [{"a": 1}, {"b": [2]}]
    assert json_documents("  \n") == []


def test_list_services(grpcurl: str, agentd_server: ServerProcess) -> None:
    services = set(ok_output(run_grpcurl(grpcurl, agentd_server, "list"), agentd_server).split())
    missing = {*AGENTD_SERVICES, "grpc.health.v1.Health"} - services
    assert not missing, f"services missing from reflection: {sorted(missing)}; listed: {sorted(services)}"


def test_describe_agent_service(grpcurl: str, agentd_server: ServerProcess) -> None:
    out = ok_output(run_grpcurl(grpcurl, agentd_server, "describe", "agentd.v1.AgentService"), agentd_server)
    assert "agentd.v1.AgentService is a service" in out, out
    for rpc in ("rpc Stream", "rpc Generate", "rpc GetAgent", "rpc ListAgents"):
        assert rpc in out, f"{rpc!r} missing from:\n{out}"
    assert "returns ( stream .agentd.v1.StreamResponse )" in out, out


@pytest.mark.parametrize("service", ["", *AGENTD_SERVICES])
def test_health_serving(grpcurl: str, agentd_server: ServerProcess, service: str) -> None:
    result = run_grpcurl(
        grpcurl, agentd_server, "-d", json.dumps({"service": service}), "--", "grpc.health.v1.Health/Check"
    )
    docs = json_documents(ok_output(result, agentd_server))
    assert docs == [{"status": "SERVING"}]


def test_stream_echo(grpcurl: str, agentd_server: ServerProcess) -> None:
    text = "hi there"
    result = run_grpcurl(
        grpcurl,
        agentd_server,
        "-d",
        json.dumps({"agentId": "echo", "text": text}),
        "--",
        "agentd.v1.AgentService/Stream",
    )
    docs = json_documents(ok_output(result, agentd_server))
    assert docs, "Stream printed no response message"
    assert all(doc.get("chunks") for doc in docs), f"a response message carries no chunk: {docs}"
    chunks = [chunk for doc in docs for chunk in doc["chunks"]]

    assert [int(chunk["seq"]) for chunk in chunks] == list(range(1, len(chunks) + 1)), chunks
    assert len({chunk["run_id"] for chunk in chunks}) == 1, chunks
    assert "start" in chunks[0], chunks[0]
    assert chunks[0]["start"].get("agent_id") == "echo", chunks[0]
    deltas = [chunk["text_delta"].get("text", "") for chunk in chunks if "text_delta" in chunk]
    assert "".join(deltas) == text, f"text deltas {deltas} do not join to {text!r}"
    assert "finish" in chunks[-1], chunks[-1]
    assert chunks[-1]["finish"].get("finish_reason") == "FINISH_REASON_STOP", chunks[-1]


def test_generate_echo(grpcurl: str, agentd_server: ServerProcess) -> None:
    text = "hi there"
    result = run_grpcurl(
        grpcurl,
        agentd_server,
        "-d",
        json.dumps({"agentId": "echo", "text": text}),
        "--",
        "agentd.v1.AgentService/Generate",
    )
    docs = json_documents(ok_output(result, agentd_server))
    assert len(docs) == 1, docs
    resp = docs[0]
    assert resp.get("text") == text, resp
    assert resp.get("finish_reason") == "FINISH_REASON_STOP", resp
    assert int(resp.get("usage", {}).get("input_tokens", 0)) > 0, resp
    assert resp.get("run_id"), resp


def test_get_unknown_agent_is_not_found(grpcurl: str, agentd_server: ServerProcess) -> None:
    result = run_grpcurl(
        grpcurl, agentd_server, "-d", json.dumps({"agentId": "nope"}), "--", "agentd.v1.AgentService/GetAgent"
    )
    assert result.returncode != 0, f"GetAgent(nope) succeeded: {result.stdout}"
    assert "Code: NotFound" in result.stderr, result.stderr
    assert "AGENT_NOT_FOUND" in result.stderr, result.stderr
