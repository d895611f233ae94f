"""The programs of examples/ (raw stubs in Python, Go and TypeScript), built the
way the README says and run against a real server: each prints the echo
agent's Generate reply and its streamed text. Also the Python client's tour,
clients/python/examples/chat_example.py, run with the command its README gives.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from .node_build import npm_ci_and_build, run
from .serverproc import GO_HINT, REPO_ROOT, ServerProcess, require_tool

EXAMPLES = REPO_ROOT / "examples"
BUILD_TIMEOUT_S = 600
RUN_TIMEOUT_S = 60
#: What every example prints: Generate's text and output tokens, then the streamed text.
EXPECTED = "hi 1\none two three\n"


def _ok(result: subprocess.CompletedProcess[str], server: ServerProcess) -> str:
    assert result.returncode == 0, (
        f"{result.args} exited with {result.returncode}\n--- stdout ---\n{result.stdout}\n"
        f"--- stderr ---\n{result.stderr}\n{server.log_tail()}"
    )
    return result.stdout


def test_the_python_example(agentd_server: ServerProcess) -> None:
    python = REPO_ROOT / ".venv" / "bin" / "python"  # the README's command: make run's venv
    args = [str(python), "examples/python/stream.py", "--addr", agentd_server.addr]
    assert _ok(run(args, REPO_ROOT, RUN_TIMEOUT_S), agentd_server) == EXPECTED


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_the_go_example(agentd_server: ServerProcess, tmp_path: Path) -> None:
    go = require_tool("go", GO_HINT)
    binary = tmp_path / "stream"
    _ok(run([go, "build", "-o", str(binary), "."], EXAMPLES / "go", BUILD_TIMEOUT_S), agentd_server)
    _ok(run([go, "vet", "./..."], EXAMPLES / "go", BUILD_TIMEOUT_S), agentd_server)
    assert _ok(run([str(binary), "--addr", agentd_server.addr], tmp_path, RUN_TIMEOUT_S), agentd_server) == EXPECTED


@pytest.mark.timeout(3 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_the_typescript_example(agentd_server: ServerProcess, ts_proto: tuple[str, str]) -> None:
    node, npm = ts_proto
    project = EXAMPLES / "ts"
    npm_ci_and_build(npm, project)  # tsc type-checks it
    grpc_js = sorted(str(p.relative_to(project)) for p in (project / "node_modules").rglob("@grpc/grpc-js"))
    assert grpc_js == ["node_modules/@grpc/grpc-js"], "one @grpc/grpc-js, or credentials are refused"
    result = run([node, "dist/stream.js", "--addr", agentd_server.addr], project, RUN_TIMEOUT_S)
    assert _ok(result, agentd_server) == EXPECTED


def test_the_python_client_tour_runs_with_its_readme_command(agentd_server: ServerProcess) -> None:
    readme = (REPO_ROOT / "clients" / "python" / "README.md").read_text(encoding="utf-8")
    found = re.search(r"then run `([^`]*chat_example\.py)`", readme)
    assert found is not None, "clients/python/README.md no longer says how to run chat_example.py"
    args = [*shlex.split(found.group(1)), "--addr", agentd_server.addr]
    out = _ok(run(args, REPO_ROOT, RUN_TIMEOUT_S), agentd_server)
    assert "connect: 'You picked blue.'" in out.splitlines(), out
