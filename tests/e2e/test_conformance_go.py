"""The Go client (clients/go) against the shared conformance scenarios.

Builds the Go conformance runner (clients/go/cmd/conformance), starts the
conformance server (tests/conformance/agentd.toml with --app
tests.conformance.app) and checks that the runner passes every scenario of
tests/conformance/scenarios.json, also against the same server with
`[auth] mode = "token"` over TLS (-token, -cacert) and with mutual TLS (a
client certificate alone: -cert, -key). Also keeps the module `go vet` clean
and its unit tests (error parsing, stream reconnection, credentials) green,
and runs its live tests (live_test.go: a token from `$AGENTD_TOKEN` alone,
structured output's fallback strategy) against the same servers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .secure import secure_conformance_server
from .serverproc import GO_HINT, OUTLAST_S, REPO_ROOT, ServerProcess, require_tool, served, start_server

GO_CLIENT_DIR = REPO_ROOT / "clients" / "go"
CONFORMANCE_DIR = REPO_ROOT / "tests" / "conformance"
SCENARIOS = CONFORMANCE_DIR / "scenarios.json"

BUILD_TIMEOUT_S = 600
RUN_TIMEOUT_S = 300

SUMMARY = re.compile(r"^conformance: (\d+) passed, (\d+) failed$")


def _text(out: str | bytes | None) -> str:
    """Output captured by TimeoutExpired is bytes even in text mode."""
    if isinstance(out, bytes):
        return out.decode("utf-8", errors="replace")
    return out or ""


def _go(
    args: list[str], timeout: float = BUILD_TIMEOUT_S, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `go <args>` in clients/go; fail the test with its output when it fails."""
    go = require_tool("go", GO_HINT)
    cmd = [go, *args]
    try:
        result = subprocess.run(
            cmd, cwd=GO_CLIENT_DIR, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired as err:
        pytest.fail(
            f"`{' '.join(cmd)}` in {GO_CLIENT_DIR} timed out after {timeout}s:\n"
            f"{_text(err.stdout)}\n{_text(err.stderr)}"
        )
    if result.returncode != 0:
        pytest.fail(
            f"`{' '.join(cmd)}` in {GO_CLIENT_DIR} exited with {result.returncode}:\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )
    return result


def scenario_count() -> int:
    scenarios = json.loads(SCENARIOS.read_text(encoding="utf-8"))["scenarios"]
    assert scenarios, f"{SCENARIOS} holds no scenario"
    return len(scenarios)


@pytest.fixture(scope="module")
def conformance_runner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go conformance runner, built from clients/go/cmd/conformance."""
    binary = tmp_path_factory.mktemp("go-conformance") / "conformance"
    _go(["build", "-o", str(binary), "./cmd/conformance"])
    return binary


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """`agentd serve` with the conformance config and processors."""
    yield from served(
        start_server(
            config=CONFORMANCE_DIR / "agentd.toml",
            extra_args=["--app", "tests.conformance.app"],
            log_dir=tmp_path_factory.mktemp("agentd-conformance"),
        )
    )


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client_passes_every_conformance_scenario(
    conformance_runner: Path, conformance_server: ServerProcess
) -> None:
    run_conformance(conformance_runner, conformance_server)


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client_passes_every_conformance_scenario_on_a_replica(
    conformance_runner: Path, conformance_replicas: list[ServerProcess]
) -> None:
    """The same scenarios against one of three replicas on Redis (the Python
    runner calls all three round robin)."""
    run_conformance(conformance_runner, conformance_replicas[1])


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client_passes_every_conformance_scenario_with_a_token_over_tls(
    conformance_runner: Path, tmp_path: Path
) -> None:
    with secure_conformance_server(tmp_path) as (server, pki, caller):
        run_conformance(conformance_runner, server, "-token", caller.token, "-cacert", str(pki.ca))


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client_passes_every_conformance_scenario_over_mutual_tls(conformance_runner: Path, tmp_path: Path) -> None:
    with secure_conformance_server(tmp_path, mtls=True) as (server, pki, _):
        certificate = ["-cert", str(pki.client_cert), "-key", str(pki.client_key)]
        run_conformance(conformance_runner, server, "-cacert", str(pki.ca), *certificate)


def run_conformance(conformance_runner: Path, conformance_server: ServerProcess, *options: str) -> None:
    args = [str(conformance_runner), "-addr", conformance_server.addr, "-scenarios", str(SCENARIOS), *options]
    env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}  # only the token a test gives
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, env=env)
    except subprocess.TimeoutExpired as err:
        pytest.fail(
            f"{args} timed out after {RUN_TIMEOUT_S}s:\n{_text(err.stdout)}\n{_text(err.stderr)}\n"
            + conformance_server.log_tail()
        )
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{conformance_server.log_tail()}"
    lines = result.stdout.splitlines()
    summary = SUMMARY.match(lines[-1]) if lines else None
    assert summary is not None, f"the runner's last line is not `conformance: N passed, M failed`\n{output}"
    passed, failed = int(summary[1]), int(summary[2])
    assert result.returncode == 0, f"{args} exited with {result.returncode}\n{output}"
    assert failed == 0, f"{failed} scenario(s) failed\n{output}"
    assert passed == scenario_count(), f"{passed} passed, want every one of {scenario_count()} scenarios\n{output}"


@pytest.mark.timeout(BUILD_TIMEOUT_S + OUTLAST_S)
def test_go_client_vet_is_clean() -> None:
    _go(["vet", "./..."])


@pytest.mark.timeout(BUILD_TIMEOUT_S + OUTLAST_S)
def test_go_client_unit_tests() -> None:
    _go(["test", "-count=1", "./..."])


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_go_client_live_tests(conformance_server: ServerProcess, tmp_path: Path) -> None:
    """live_test.go: the token from `$AGENTD_TOKEN` alone (the test sets it)
    over TLS, and a fallback strategy's value for an answer that is no object."""
    with secure_conformance_server(tmp_path) as (secure, pki, caller):
        env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}
        env |= {
            "AGENTD_ADDR": conformance_server.addr,
            "AGENTD_SECURE_ADDR": secure.addr,
            "AGENTD_SECURE_CA": str(pki.ca),
            "AGENTD_SECURE_TOKEN": caller.token,
        }
        result = _go(["test", "-count=1", "-v", "-run", "^TestLive", "."], RUN_TIMEOUT_S, env)
    passed = re.findall(r"^--- PASS: (TestLive\w+)", result.stdout, re.MULTILINE)
    assert "--- SKIP" not in result.stdout, result.stdout
    assert sorted(passed) == [
        "TestLiveAFallbackStrategyAnswersWithTheFallbackValue",
        "TestLiveTheTokenComesFromAgentdTokenWhenNoneIsGiven",
    ], result.stdout
