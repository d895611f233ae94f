"""Start and stop a real `agentd serve` process for end-to-end tests.

A plain module (not a conftest) so any e2e test can import it:

    from .serverproc import start_server  # from a module in tests/e2e

    server = start_server(extra_args=["--grace", "1"])
    try:
        server.wait_serving(timeout=30)
        ...
    finally:
        server.stop()
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]
DEFAULT_CONFIG = REPO_ROOT / "agentd.toml"
HOST = "127.0.0.1"
STARTUP_TIMEOUT_S = 30.0
SHUTDOWN_TIMEOUT_S = 20.0
#: A test's own limit past a command's (subprocess.run's timeout=): the command's
#: timeout fails the test with the command's output, the test's kills it silently.
OUTLAST_S = 60
#: For require_tool("go", GO_HINT): the go.mod files ask for 1.26.
GO_HINT = "the Go toolchain >= 1.26 from https://go.dev/dl/ (Debian's golang-go, 1.19, is too old)"


def run_bench(script: str, *args: str, timeout: float = 120) -> tuple[int, str]:
    """bench/`script` run with this interpreter from the repository's root:
    its exit code and everything it printed."""
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / script), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout + done.stderr


def agentd_executable() -> Path:
    """The `agentd` console script of the running interpreter's environment."""
    return Path(sys.prefix) / "bin" / "agentd"


def require_tool(name: str, package_hint: str) -> str:
    """Return the path of the executable `name` (a command or a path).

    Fails the calling test (never skips it) when the tool is missing, naming
    the tool and how to install it.
    """
    path = shutil.which(name)
    if path is None:
        pytest.fail(
            f"required tool {name!r} not found (not on PATH or not executable); install it: {package_hint}",
            pytrace=False,
        )
    return path


def free_port() -> int:
    """A TCP port on the loopback interface that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class ServerNotServingError(RuntimeError):
    """The server did not report SERVING in time, or exited before it did."""


@dataclass
class ServerProcess:
    """A running `agentd serve` subprocess."""

    addr: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path
    args: tuple[str, ...]

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the server log, for failure messages."""
        return _log_tail(self.log_path, lines)

    def wait_serving(self, timeout: float = 30.0, *, credentials: grpc.ChannelCredentials | None = None) -> None:
        """`credentials`: those of a TLS server (plaintext when None)."""
        wait_serving(self.addr, timeout, proc=self.proc, log_path=self.log_path, credentials=credentials)

    def terminate(self, timeout: float = 20.0) -> tuple[int, bool]:
        """Send SIGTERM, wait up to `timeout` seconds, then SIGKILL.

        Returns the exit code and whether the process had to be killed.
        """
        if self.proc.poll() is not None:
            return self.proc.returncode, False
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(), True

    def stop(self, timeout: float = 20.0) -> int:
        """Like terminate(), returning the exit code only."""
        return self.terminate(timeout)[0]


def start_server(
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    *,
    config: Path | str = DEFAULT_CONFIG,
    port: int | None = None,
    log_dir: Path | str | None = None,
    cwd: Path | str | None = None,
) -> ServerProcess:
    """Start `agentd serve` on a free loopback port; does not wait for it.

    `env` replaces the environment when given (start from `os.environ` to
    extend it). Output (stdout and stderr) goes to `<log_dir>/agentd.log`; a
    fresh temporary directory is used when `log_dir` is None. Call
    `wait_serving()` next, and `stop()` when done.
    """
    exe = agentd_executable()
    if not exe.exists():
        pytest.fail(
            f"agentd executable not found at {exe}; install the server into this environment "
            f"(pip install -e {REPO_ROOT})",
            pytrace=False,
        )
    port = free_port() if port is None else port
    log_dir = Path(tempfile.mkdtemp(prefix="agentd-e2e-")) if log_dir is None else Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"agentd-{port}.log"
    if Path(config) == DEFAULT_CONFIG:
        config = own_sqlite(DEFAULT_CONFIG, log_dir)
    args = (
        str(exe),
        "serve",
        "--config",
        str(config),
        "--host",
        HOST,
        "--port",
        str(port),
        *extra_args,
    )
    proc_env = dict(os.environ if env is None else env)
    proc_env.setdefault("PYTHONUNBUFFERED", "1")
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=proc_env,
            cwd=REPO_ROOT if cwd is None else cwd,
        )
    return ServerProcess(addr=f"{HOST}:{port}", port=port, proc=proc, log_path=log_path, args=args)


def served(server: ServerProcess) -> Iterator[ServerProcess]:
    """A fixture's life of `server`: yields it once its health service reports
    SERVING (the test fails, with the log, when it never does); then SIGTERM,
    and the test fails if the server had to be killed."""
    try:
        server.wait_serving(timeout=STARTUP_TIMEOUT_S)
    except ServerNotServingError as err:
        server.stop(timeout=SHUTDOWN_TIMEOUT_S)
        pytest.fail(str(err), pytrace=False)
    except BaseException:
        server.stop(timeout=SHUTDOWN_TIMEOUT_S)
        raise
    try:
        yield server
    finally:
        _, killed = server.terminate(timeout=SHUTDOWN_TIMEOUT_S)
    if killed:
        pytest.fail(
            f"agentd did not exit within {SHUTDOWN_TIMEOUT_S:.0f}s of SIGTERM and was killed\n" + server.log_tail(),
            pytrace=False,
        )


def own_sqlite(config: Path, folder: Path) -> Path:
    """A copy of `config` whose SQLite file is in `folder`: one process per
    SQLite file, so every server a test starts from the repository's
    agentd.toml gets its own (and the checkout's agentd-data is left alone).
    Its metrics endpoint, on a fixed port there, takes any free port instead."""
    text = config.read_text()
    default = 'path = "agentd-data/agentd.db"'
    assert default in text, f"{config} no longer names {default}"
    text = text.replace(default, f'path = "{folder / "agentd.db"}"')
    copy = folder / f"agentd-{uuid.uuid4().hex[:8]}.toml"
    copy.write_text(re.sub(r"(?m)^metrics_port = \d+$", "metrics_port = 0", text))
    return copy


def _log_tail(log_path: Path | None, lines: int = 60) -> str:
    if log_path is None:
        return ""
    try:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
    except FileNotFoundError:
        return ""
    return f"\n--- agentd log ({log_path}), last {len(tail)} lines ---\n" + "\n".join(tail)


def wait_serving(
    addr: str,
    timeout: float = 30.0,
    *,
    proc: subprocess.Popen[bytes] | None = None,
    log_path: Path | None = None,
    service: str = "",
    credentials: grpc.ChannelCredentials | None = None,
) -> None:
    """Poll grpc.health.v1.Health/Check(service) on `addr` until SERVING
    (over TLS with `credentials`; health needs no caller credentials).

    Raises ServerNotServingError after `timeout` seconds, or as soon as `proc`
    (when given) has exited; the message carries the tail of `log_path`.
    """
    deadline = time.monotonic() + timeout
    last = "no answer yet"
    channel = grpc.insecure_channel(addr) if credentials is None else grpc.secure_channel(addr, credentials)
    with channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc is not None and proc.poll() is not None:
                raise ServerNotServingError(
                    f"agentd exited with code {proc.returncode} before serving on {addr}" + _log_tail(log_path)
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ServerNotServingError(
                    f"agentd on {addr} not SERVING after {timeout:.0f}s (last: {last})" + _log_tail(log_path)
                )
            try:
                resp = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=min(1.0, remaining))
            except grpc.RpcError as err:
                code = err.code() if isinstance(err, grpc.Call) else None
                last = f"{code}: {err.details() if isinstance(err, grpc.Call) else err}"
            else:
                if resp.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last = health_pb2.HealthCheckResponse.ServingStatus.Name(resp.status)
            time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))
