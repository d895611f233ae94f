"""The Java client (clients/java, agentd-client) against the shared conformance scenarios.

Builds the Maven reactor of clients/java (gen/java's stubs, the client, the
conformance runner and the examples) with `mvn -B -q package`, starts the
conformance server (tests/conformance/agentd.toml with --app
tests.conformance.app) and checks that the runner
(`java -jar conformance/target/agentd-conformance.jar`) passes every scenario of
tests/conformance/scenarios.json, also on a replica, with `[auth] mode =
"token"` over TLS (--token, --cacert) and with mutual TLS (--cert, --key
alone). Also runs the client's JUnit tests (errors, credentials, trace context,
streams against an in-process gRPC server), and its live ones (LiveTest, `mvn
test -Plive`: a token from `$AGENTD_TOKEN` alone, structured output's fallback
strategy) against the same servers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import java_build
from .java_build import BUILD_TIMEOUT_S, EXAMPLES_JAR, JAVA_CLIENT_DIR, JAVA_HINT, decoded
from .secure import secure_conformance_server
from .serverproc import OUTLAST_S, REPO_ROOT, ServerProcess, require_tool, served, start_server

CONFORMANCE_DIR = REPO_ROOT / "tests" / "conformance"
SCENARIOS = CONFORMANCE_DIR / "scenarios.json"

RUN_TIMEOUT_S = 300

SUMMARY = re.compile(r"^conformance: (\d+) passed, (\d+) failed$")


def scenario_count() -> int:
    scenarios = json.loads(SCENARIOS.read_text(encoding="utf-8"))["scenarios"]
    assert scenarios, f"{SCENARIOS} holds no scenario"
    return len(scenarios)


@pytest.fixture(scope="module")
def conformance_runner(java_reactor: str) -> Path:
    """The runnable jar of the Java conformance runner (its dependencies in target/lib)."""
    return java_build.CONFORMANCE_JAR


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from served(
        start_server(
            config=CONFORMANCE_DIR / "agentd.toml",
            extra_args=["--app", "tests.conformance.app"],
            log_dir=tmp_path_factory.mktemp("agentd-conformance-java"),
        )
    )


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_java_client_passes_every_conformance_scenario(
    conformance_runner: Path, conformance_server: ServerProcess
) -> None:
    run_conformance(conformance_runner, conformance_server)


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_java_client_passes_every_conformance_scenario_on_a_replica(
    conformance_runner: Path, conformance_replicas: list[ServerProcess]
) -> None:
    """The same scenarios against one of three replicas on Redis."""
    run_conformance(conformance_runner, conformance_replicas[0])


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_java_client_passes_every_conformance_scenario_with_a_token_over_tls(
    conformance_runner: Path, tmp_path: Path
) -> None:
    with secure_conformance_server(tmp_path) as (server, pki, caller):
        run_conformance(conformance_runner, server, "--token", caller.token, "--cacert", str(pki.ca))


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_java_client_passes_every_conformance_scenario_over_mutual_tls(
    conformance_runner: Path, tmp_path: Path
) -> None:
    with secure_conformance_server(tmp_path, mtls=True) as (server, pki, _):
        certificate = ["--cert", str(pki.client_cert), "--key", str(pki.client_key)]
        run_conformance(conformance_runner, server, "--cacert", str(pki.ca), *certificate)


def run_conformance(jar: Path, server: ServerProcess, *options: str) -> None:
    java = require_tool("java", JAVA_HINT)
    args = [java, "-jar", str(jar), "--addr", server.addr, "--scenarios", str(SCENARIOS), *options]
    env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}  # only the token a test gives
    try:
        result = subprocess.run(args, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, env=env)
    except subprocess.TimeoutExpired as err:
        output = f"{decoded(err.stdout)}\n{decoded(err.stderr)}\n{server.log_tail()}"
        pytest.fail(f"{args} timed out after {RUN_TIMEOUT_S}s:\n{output}")
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{server.log_tail()}"
    lines = result.stdout.splitlines()
    summary = SUMMARY.match(lines[-1]) if lines else None
    assert summary is not None, f"the runner's last line is not `conformance: N passed, M failed`\n{output}"
    passed, failed = int(summary[1]), int(summary[2])
    assert result.returncode == 0, f"{args} exited with {result.returncode}\n{output}"
    assert failed == 0, f"{failed} scenario(s) failed\n{output}"
    assert passed == scenario_count(), f"{passed} passed, want every one of {scenario_count()} scenarios\n{output}"


def _run(args: list[str], server: ServerProcess, extra_env: dict[str, str] | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"} | (extra_env or {})
    result = subprocess.run(args, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, env=env)
    assert result.returncode == 0, f"{args} exited with {result.returncode}\n{result.stdout}\n{result.stderr}\n" + (
        server.log_tail()
    )
    return result.stdout


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_the_chat_example_runs_with_its_readme_command(
    conformance_runner: Path, conformance_server: ServerProcess
) -> None:
    java = require_tool("java", JAVA_HINT)
    args = [java, "-jar", str(EXAMPLES_JAR), "--addr", conformance_server.addr, "--say", "hello java"]
    out = _run([*args, "--thread", "java-example", "--resource", "java-user"], conformance_server)
    assert out == "hello java\n--- thread java-example\nuser: hello java\nassistant: hello java\n"


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_the_secure_example_calls_with_a_token_over_tls(conformance_runner: Path, tmp_path: Path) -> None:
    java = require_tool("java", JAVA_HINT)
    with secure_conformance_server(tmp_path) as (server, pki, caller):
        args = [java, "-cp", str(EXAMPLES_JAR), "io.github.agentd.examples.Secure", "--addr", server.addr]
        out = _run([*args, "--token", caller.token, "--cacert", str(pki.ca)], server)
        assert out == "hello over TLS\n"
        # Without --token, the builder's default: $AGENTD_TOKEN.
        out = _run([*args, "--cacert", str(pki.ca)], server, {"AGENTD_TOKEN": caller.token})
        assert out == "hello over TLS\n"


@pytest.mark.timeout(BUILD_TIMEOUT_S + OUTLAST_S)
def test_java_client_unit_tests() -> None:
    """The JUnit tests of clients/java/client (Surefire), run through the reactor."""
    folder = JAVA_CLIENT_DIR / "client" / "target" / "surefire-reports"
    shutil.rmtree(folder, ignore_errors=True)  # only this run's reports count
    result = java_build.mvn("test", "-pl", "client", "-am")
    reports = sorted(folder.glob("TEST-*.xml"))
    assert reports, f"Surefire wrote no report: no JUnit test ran\n{result.stdout}\n{result.stderr}"
    ran = sum(int(m) for r in reports for m in re.findall(r'<testsuite[^>]* tests="(\d+)"', r.read_text()))
    skipped = sum(int(m) for r in reports for m in re.findall(r'<testsuite[^>]* skipped="(\d+)"', r.read_text()))
    assert ran > 0 and skipped == 0, f"{ran} JUnit tests ran, {skipped} skipped\n{result.stdout}"


@pytest.mark.timeout(BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_java_client_live_tests(conformance_server: ServerProcess, tmp_path: Path) -> None:
    """LiveTest (clients/java/client, `mvn test -Plive`): the token from
    `$AGENTD_TOKEN` alone over TLS, and a fallback strategy's value for an
    answer that is no object (the local model scripted through provider options)."""
    folder = JAVA_CLIENT_DIR / "client" / "target" / "surefire-reports"
    shutil.rmtree(folder, ignore_errors=True)  # only this run's reports count
    with secure_conformance_server(tmp_path) as (secure, pki, caller):
        env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}
        env |= {
            "AGENTD_ADDR": conformance_server.addr,
            "AGENTD_SECURE_ADDR": secure.addr,
            "AGENTD_SECURE_CA": str(pki.ca),
            "AGENTD_TOKEN": caller.token,
        }
        result = java_build.mvn("test", "-pl", "client", "-am", "-Plive", env=env)
    reports = [r.read_text() for r in folder.glob("TEST-*.xml")]
    assert len(reports) == 1 and 'name="io.github.agentd.client.LiveTest"' in reports[0], result.stdout
    cases = sorted(re.findall(r'<testcase name="(\w+)"', reports[0]))
    assert cases == [
        "aFallbackStrategyAnswersWithTheFallbackValue",
        "theTokenComesFromAgentdTokenWhenNoneIsGiven",
    ], reports[0]
    suite = re.search(r"<testsuite [^>]*>", reports[0])
    assert suite is not None and ' skipped="0"' in suite[0], reports[0]  # a failure already failed mvn
