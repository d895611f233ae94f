"""Fixtures for the agentd end-to-end tests: a real `agentd serve` process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .serverproc import ServerNotServingError, ServerProcess, start_server

STARTUP_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 20.0


@pytest.fixture(scope="session")
def agentd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One `agentd serve --config agentd.toml` on a free loopback port.

    Yields the ServerProcess (`.addr`, `.proc`, `.log_path`) once the overall
    health service reports SERVING; sends SIGTERM at the end of the session
    and fails if the server has to be killed.
    """
    server = start_server(log_dir=tmp_path_factory.mktemp("agentd"))
    try:
        server.wait_serving(timeout=STARTUP_TIMEOUT_S)
    except ServerNotServingError as err:
        server.stop(timeout=SHUTDOWN_TIMEOUT_S)
        pytest.fail(str(err), pytrace=False)
    except BaseException:
        server.stop(timeout=SHUTDOWN_TIMEOUT_S)
        raise

    yield server

    _, killed = server.terminate(timeout=SHUTDOWN_TIMEOUT_S)
    if killed:
        pytest.fail(
            f"agentd did not exit within {SHUTDOWN_TIMEOUT_S:.0f}s of SIGTERM and was killed\n" + server.log_tail(),
            pytrace=False,
        )


@pytest.fixture(scope="session")
def ts_client() -> tuple[str, str]:
    """(node, npm) once gen/ts and clients/ts are built (once per session);
    fails clearly when npm is missing."""
    from .node_build import NODE_HINT, TS_CLIENT_DIR, TS_GEN_DIR, npm_ci_and_build
    from .serverproc import require_tool

    node = require_tool("node", NODE_HINT)
    npm = require_tool("npm", NODE_HINT)
    npm_ci_and_build(npm, TS_GEN_DIR)  # clients/ts installs a copy of gen/ts, dist/ included
    npm_ci_and_build(npm, TS_CLIENT_DIR)
    return node, npm
