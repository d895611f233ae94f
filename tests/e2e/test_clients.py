"""The generated Go and TypeScript clients against a real agentd server.

Each client program (tests/e2e/go, tests/e2e/node) is built once per session
and then run against the `agentd_server` fixture; it checks Generate, Stream
and GetAgent(NOT_FOUND) itself and prints "<lang> client: ok" on success.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .serverproc import E2E_DIR, GO_HINT, ServerProcess, require_tool

GO_DIR = E2E_DIR / "go"
NODE_DIR = E2E_DIR / "node"

BUILD_TIMEOUT_S = 600
RUN_TIMEOUT_S = 60


def _text(out: str | bytes | None) -> str:
    """Output captured by TimeoutExpired is bytes even in text mode."""
    if isinstance(out, bytes):
        return out.decode("utf-8", errors="replace")
    return out or ""


def _run_step(args: list[str], cwd: Path, timeout: float = BUILD_TIMEOUT_S) -> None:
    """Run one build step; fail the test with its output when it fails."""
    try:
        result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as err:
        pytest.fail(
            f"`{' '.join(args)}` in {cwd} timed out after {timeout}s:\n{_text(err.stdout)}\n{_text(err.stderr)}"
        )
    if result.returncode != 0:
        pytest.fail(
            f"`{' '.join(args)}` in {cwd} exited with {result.returncode}:\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )


def _npm_install_and_build(npm: str, project: Path) -> None:
    install = ["ci"] if (project / "package-lock.json").exists() else ["install"]
    _run_step([npm, *install, "--no-audit", "--no-fund"], project)
    _run_step([npm, "run", "build"], project)


@pytest.fixture(scope="session")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go e2e client, built from tests/e2e/go."""
    go = require_tool("go", GO_HINT)
    binary = tmp_path_factory.mktemp("go-client") / "go-client"
    _run_step([go, "build", "-o", str(binary), "."], GO_DIR)
    return binary


@pytest.fixture(scope="session")
def node_client(ts_proto: tuple[str, str]) -> list[str]:
    """The command running the Node e2e client, built from tests/e2e/node
    once gen/ts (@agentd/proto) is: the client depends on its dist/."""
    node, npm = ts_proto
    _npm_install_and_build(npm, NODE_DIR)
    return [node, str(NODE_DIR / "dist" / "main.js")]


def _run_client(args: list[str], server: ServerProcess, ok_line: str) -> None:
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as err:
        pytest.fail(
            f"{args} timed out after {RUN_TIMEOUT_S}s:\n{_text(err.stdout)}\n{_text(err.stderr)}\n{server.log_tail()}"
        )
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{server.log_tail()}"
    assert result.returncode == 0, f"{args} exited with {result.returncode}\n{output}"
    assert ok_line in result.stdout.splitlines(), f"{ok_line!r} missing from the output\n{output}"


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client(go_client: Path, agentd_server: ServerProcess) -> None:
    _run_client([str(go_client), "-addr", agentd_server.addr], agentd_server, "go client: ok")


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_node_client(node_client: list[str], agentd_server: ServerProcess) -> None:
    _run_client([*node_client, "--addr", agentd_server.addr], agentd_server, "node client: ok")
