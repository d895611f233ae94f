"""The TypeScript client (clients/ts, @agentd/client) against a real agentd.

Builds gen/ts (@agentd/proto) and clients/ts with npm ci + npm run build,
starts the conformance server (tests/conformance/agentd.toml with
--app tests.conformance.app), then:

- runs the conformance runner (`node dist/conformance.js`) over
  tests/conformance/scenarios.json: it must exit 0 and pass every scenario,
  also against the same server with `[auth] mode = "token"` over TLS
  (--token, --cacert) and with mutual TLS (--cert, --key alone);
- runs the client's own tests (build/test/*.test.js, as `npm test` does:
  fake-server unit tests, and live tests against the same server through
  AGENTD_ADDR, and against the token + TLS one through AGENTD_SECURE_*:
  among them a token from `$AGENTD_TOKEN` alone, and structured output's
  fallback strategy).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from .node_build import BUILD_TIMEOUT_S, TS_CLIENT_DIR, run
from .secure import Caller, Pki, new_caller, secure_conformance_server
from .serverproc import REPO_ROOT, ServerProcess, served, start_server

CONFORMANCE_DIR = REPO_ROOT / "tests" / "conformance"
SCENARIOS = CONFORMANCE_DIR / "scenarios.json"

RUN_TIMEOUT_S = 300
SUMMARY = re.compile(r"^conformance: (\d+) passed, (\d+) failed$")


@pytest.fixture(scope="module")
def conformance_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from served(
        start_server(
            config=CONFORMANCE_DIR / "agentd.toml",
            extra_args=["--app", "tests.conformance.app"],
            log_dir=tmp_path_factory.mktemp("agentd-conformance-ts"),
        )
    )


@pytest.fixture(scope="module")
def secure_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Pki, Caller, Caller]]:
    """The conformance server with a token over TLS: (server, its PKI, the
    writer and admin caller, a reader)."""
    reader = new_caller("acme", "ts-reader", ["reader"])
    folder = tmp_path_factory.mktemp("agentd-conformance-ts-secure")
    with secure_conformance_server(folder, callers=[reader]) as (server, pki, caller):
        yield server, pki, caller, reader


def _scenario_count() -> int:
    scenarios = json.loads(SCENARIOS.read_text(encoding="utf-8"))["scenarios"]
    assert isinstance(scenarios, list) and scenarios, f"no scenarios in {SCENARIOS}"
    return len(scenarios)


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_ts_conformance(ts_client: tuple[str, str], conformance_server: ServerProcess) -> None:
    run_conformance(ts_client, conformance_server)


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_ts_conformance_on_a_replica(ts_client: tuple[str, str], conformance_replicas: list[ServerProcess]) -> None:
    """The same scenarios against one of three replicas on Redis."""
    run_conformance(ts_client, conformance_replicas[2])


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_ts_conformance_with_a_token_over_tls(
    ts_client: tuple[str, str], secure_server: tuple[ServerProcess, Pki, Caller, Caller]
) -> None:
    server, pki, caller, _ = secure_server
    run_conformance(ts_client, server, "--token", caller.token, "--cacert", str(pki.ca))


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_ts_conformance_over_mutual_tls(ts_client: tuple[str, str], tmp_path: Path) -> None:
    with secure_conformance_server(tmp_path, mtls=True) as (server, pki, _):
        certificate = ["--cert", str(pki.client_cert), "--key", str(pki.client_key)]
        run_conformance(ts_client, server, "--cacert", str(pki.ca), *certificate)


def run_conformance(ts_client: tuple[str, str], conformance_server: ServerProcess, *options: str) -> None:
    node, _ = ts_client
    args = [node, "dist/conformance.js", "--addr", conformance_server.addr, "--scenarios", str(SCENARIOS), *options]
    env = {k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"}  # only the token a test gives
    result = run(args, TS_CLIENT_DIR, RUN_TIMEOUT_S, env=env)
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{conformance_server.log_tail()}"
    lines = result.stdout.strip().splitlines()
    summary = SUMMARY.match(lines[-1]) if lines else None
    assert summary is not None, f"the runner's last line is not `conformance: N passed, M failed`\n{output}"
    assert result.returncode == 0, f"the TypeScript conformance runner exited with {result.returncode}\n{output}"
    passed, failed = int(summary.group(1)), int(summary.group(2))
    assert failed == 0, output
    assert passed == _scenario_count(), f"passed {passed}, want every scenario ({_scenario_count()})\n{output}"


@pytest.mark.timeout(2 * 2 * BUILD_TIMEOUT_S + RUN_TIMEOUT_S)
def test_ts_client_tests(
    ts_client: tuple[str, str],
    conformance_server: ServerProcess,
    secure_server: tuple[ServerProcess, Pki, Caller, Caller],
) -> None:
    node, _ = ts_client
    tests = sorted(str(p.relative_to(TS_CLIENT_DIR)) for p in (TS_CLIENT_DIR / "build" / "test").glob("*.test.js"))
    assert tests, f"no compiled tests under {TS_CLIENT_DIR / 'build' / 'test'}"
    secure, pki, caller, reader = secure_server
    env = {
        **{k: v for k, v in os.environ.items() if k != "AGENTD_TOKEN"},  # the tests set it themselves
        "AGENTD_ADDR": conformance_server.addr,
        "AGENTD_SECURE_ADDR": secure.addr,
        "AGENTD_SECURE_CA": str(pki.ca),
        "AGENTD_SECURE_TOKEN": caller.token,
        "AGENTD_SECURE_READER_TOKEN": reader.token,
    }
    result = run([node, "--test", "--test-reporter=tap", *tests], TS_CLIENT_DIR, RUN_TIMEOUT_S, env=env)
    output = f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}\n{conformance_server.log_tail()}"
    assert result.returncode == 0, f"the @agentd/client tests exited with {result.returncode}\n{output}"
    assert re.search(r"^# fail 0$", result.stdout, re.MULTILINE), output
    assert re.search(r"^# skipped 0$", result.stdout, re.MULTILINE), f"some tests were skipped\n{output}"
