"""The `agentd` command line as a person meets it: its version, its help, and
what it says when a flag is wrong, the port is taken, or no server runs."""

from __future__ import annotations

import socket
import subprocess
from importlib.metadata import version
from pathlib import Path

from .serverproc import HOST, agentd_executable, free_port, start_server


def agentd(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(agentd_executable()), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def test_version() -> None:
    done = agentd("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"agentd {version('agentd')}"


def test_serve_help_lists_the_log_levels_and_the_real_default_config() -> None:
    done = agentd("serve", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())  # argparse wraps its help
    assert "--log-level {debug,info,warning,error,critical}" in text
    assert "default: $AGENTD_CONFIG, then ./agentd.toml" in text


def test_an_unknown_log_level_is_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    done = agentd("serve", "--log-level", "verbose")
    assert done.returncode == 2
    assert "argument --log-level: invalid choice: 'verbose'" in done.stderr
    assert "Traceback" not in done.stderr
    # Any case of a level is one.
    done = agentd("serve", "--log-level", "WARNING", "--config", str(tmp_path / "missing.toml"))
    assert done.returncode == 2 and "config file" in done.stderr and "not found" in done.stderr, done.stderr


def test_a_taken_port_names_the_flag_and_the_variable(tmp_path: Path) -> None:
    config = tmp_path / "agentd.toml"
    config.write_text('[storage]\nbackend = "memory"\n')
    with socket.socket() as taken:
        taken.bind((HOST, 0))
        taken.listen()
        server = start_server(config=config, port=taken.getsockname()[1], log_dir=tmp_path)
        assert server.proc.wait(timeout=60) == 1
    log = server.log_text()
    assert "cannot listen on" in log and "--port" in log and "AGENTD_PORT" in log, log
    assert "Traceback" not in log


def test_chat_with_no_server_says_how_to_start_one_or_where_to_point() -> None:
    addr = f"{HOST}:{free_port()}"  # nothing listens there
    done = subprocess.run(
        [str(agentd_executable()), "chat", "--agent", "echo", "--addr", addr],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert f"no agentd server answers on {addr}" in done.stderr, done.stderr
    assert "agentd serve" in done.stderr and "--addr" in done.stderr
    assert "Traceback" not in done.stderr
