"""Fixtures for the agentd end-to-end tests: a real `agentd serve` process."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from . import java_build
from .node_build import NODE_HINT, TS_CLIENT_DIR, TS_GEN_DIR, npm_ci_and_build
from .serverproc import (
    REPO_ROOT,
    SHUTDOWN_TIMEOUT_S,
    STARTUP_TIMEOUT_S,
    ServerProcess,
    require_tool,
    served,
    start_server,
)


@pytest.fixture(scope="session")
def agentd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One `agentd serve --config agentd.toml` on a free loopback port.

    Yields the ServerProcess (`.addr`, `.proc`, `.log_path`) once the overall
    health service reports SERVING; sends SIGTERM at the end of the session
    and fails if the server has to be killed.
    """
    yield from served(start_server(log_dir=tmp_path_factory.mktemp("agentd")))


@pytest.fixture(scope="session")
def ts_proto() -> tuple[str, str]:
    """(node, npm) once gen/ts (@agentd/proto) is built (once per session);
    fails clearly when npm is missing. Its users install a copy of it, dist/
    included (their .npmrc sets install-links)."""
    node = require_tool("node", NODE_HINT)
    npm = require_tool("npm", NODE_HINT)
    npm_ci_and_build(npm, TS_GEN_DIR)
    return node, npm


@pytest.fixture(scope="session")
def ts_client(ts_proto: tuple[str, str]) -> tuple[str, str]:
    """(node, npm) once gen/ts and clients/ts are built (once per session)."""
    node, npm = ts_proto
    npm_ci_and_build(npm, TS_CLIENT_DIR)
    return node, npm


@pytest.fixture(scope="session")
def java_reactor() -> str:
    """`java`, once the Maven reactor of clients/java (gen/java, client, conformance, examples) is built
    (once per session)."""
    java = require_tool("java", java_build.JAVA_HINT)
    java_build.package()
    return java


@pytest.fixture(scope="session")
def conformance_replicas(tmp_path_factory: pytest.TempPathFactory, redis_server: Any) -> Iterator[list[ServerProcess]]:
    """Three replicas of the conformance server (tests/conformance/agentd.toml
    with redis coordination instead of memory storage) on one redis-server."""
    tmp = tmp_path_factory.mktemp("agentd-conformance-replicas")
    config = tmp / "agentd.toml"
    text = (REPO_ROOT / "tests" / "conformance" / "agentd.toml").read_text(encoding="utf-8")
    assert '[storage]\nbackend = "memory"\n' in text
    prefix = f"conformance-{uuid.uuid4().hex[:8]}:"
    coordination = (
        f'[coordination]\nbackend = "redis"\nredis_url = "{redis_server.url}"\nlease_ttl_ms = 2000\n'
        f'key_prefix = "{prefix}lease:"\ncluster_key_prefix = "{prefix}cluster:"\n\n'
        f'[storage]\nkey_prefix = "{prefix}store:"\n\n[cache]\nkey_prefix = "{prefix}cache:"\n'
    )
    config.write_text(text.replace('[storage]\nbackend = "memory"\n', coordination, 1), encoding="utf-8")
    servers: list[ServerProcess] = []
    try:
        for i in range(3):
            servers.append(
                start_server(
                    extra_args=["--app", "tests.conformance.app"], config=config, log_dir=tmp / str(i), cwd=REPO_ROOT
                )
            )
        for server in servers:
            server.wait_serving(timeout=STARTUP_TIMEOUT_S)
        yield servers
    finally:
        for server in servers:
            server.stop(timeout=SHUTDOWN_TIMEOUT_S)
