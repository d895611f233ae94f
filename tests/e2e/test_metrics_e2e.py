"""`agentd serve` with the README's agentd.toml, whose `[server] metrics_port`
serves Prometheus metrics: scraped over HTTP after a call; a taken metrics
port stops the server naming the key, and so does an exporter the OTEL_*
environment names that is not installed."""

from __future__ import annotations

import os
import re
import socket
import urllib.request
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from support.polling import until_sync

from .serverproc import DEFAULT_CONFIG, HOST, free_port, own_sqlite, start_server


def with_metrics_port(tmp_path: Path, port: int) -> Path:
    config = own_sqlite(DEFAULT_CONFIG, tmp_path)
    text, count = re.subn(r"(?m)^metrics_port = \d+$", f"metrics_port = {port}", config.read_text())
    assert count == 1, "the README's agentd.toml no longer turns metrics on"
    config.write_text(text)
    return config


def test_the_readme_config_serves_metrics_to_scrape(tmp_path: Path) -> None:
    metrics_port = free_port()
    server = start_server(config=with_metrics_port(tmp_path, metrics_port))
    try:
        server.wait_serving(timeout=30)
        with grpc.insecure_channel(server.addr) as channel:
            reply = agent_service_pb2_grpc.AgentServiceStub(channel).Generate(
                apb.GenerateRequest(agent_id="echo", text="count me"), timeout=30
            )
        assert reply.text == "count me"
        # The RPC's duration is recorded once grpc reports the call done, which can
        # come just after the client has its answer: scrape until it is there.

        def scrape() -> str:
            with urllib.request.urlopen(f"http://{HOST}:{metrics_port}/metrics", timeout=10) as reply:
                return str(reply.read().decode())

        body = until_sync(
            scrape, holds=lambda text: 'rpc_method="agentd.v1.AgentService/Generate"' in text, what="the RPC recorded"
        )
    finally:
        server.stop()
    assert re.search(r'^agentd_runs_started_total\{gen_ai_agent_id="echo".*\} 1\.0$', body, re.M), body
    assert 'rpc_method="agentd.v1.AgentService/Generate"' in body
    assert f"metrics on http://{HOST}:{metrics_port}/metrics" in server.log_text()


def test_a_taken_metrics_port_names_the_setting(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        server = start_server(config=with_metrics_port(tmp_path, taken.getsockname()[1]))
        assert server.proc.wait(timeout=30) == 1
    log = server.log_text()
    assert "[server] metrics_port" in log and "Traceback" not in log, log


@pytest.mark.parametrize("variable", ["OTEL_METRICS_EXPORTER", "OTEL_TRACES_EXPORTER"])
def test_an_exporter_that_is_not_installed_is_a_configuration_error(tmp_path: Path, variable: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    server = start_server(config=own_sqlite(DEFAULT_CONFIG, tmp_path), env={**env, variable: "statsd"})
    assert server.proc.wait(timeout=30) == 2
    log = server.log_text()
    assert f"agentd: configuration error: {variable}: " in log and "'statsd'" in log, log
    assert "Traceback" not in log, log
