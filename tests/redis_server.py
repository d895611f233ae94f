"""A real redis-server for tests: started on a free loopback port in a temp dir, stopped after.

    server = RedisServer.start_new()   # pytest.fail (never skip) when redis-server is missing
    server.url                         # redis://127.0.0.1:<port>/0
    server.stop(); server.start()      # the same port again ("Redis stopped mid-test")
    server.kill()                      # SIGKILL: no shutdown save, clients see the connection drop
    server.close()                     # stop and remove the temp dir

No persistence (`--save '' --appendonly no`): a restarted server is empty;
`start_new(persistent=True)` logs every write before answering it
(`--appendonly yes --appendfsync always`), so even a SIGKILLed server comes
back with every write it acknowledged. `start_new(tls=RedisTls(...))` serves
TLS only (`server.url` is then `rediss://...`).
"""

from __future__ import annotations

import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

BINARY = "redis-server"
STARTUP_SECONDS = 10.0
STOP_SECONDS = 5.0


def redis_server_binary() -> str:
    """The redis-server path; fails the test (never skips) when it is not installed."""
    path = shutil.which(BINARY)
    if path is None:
        pytest.fail(
            "redis-server is not installed, and the Redis cache backend is always tested for real: "
            "install the Debian package redis-server (apt-get install -y redis-server)",
            pytrace=False,
        )
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class RedisTls:
    """PEM files for a TLS-only server: its certificate and key, and the CA clients trust."""

    cert: Path
    key: Path
    ca: Path
    #: A client certificate and key the CA issued: when set, the server requires one (mutual TLS).
    client: tuple[Path, Path] | None = None


def _context(tls: RedisTls) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(tls.ca))
    if tls.client is not None:
        context.load_cert_chain(*map(str, tls.client))
    return context


def ping(port: int, timeout: float = 0.5, tls: RedisTls | None = None) -> bool:
    """True when a Redis server on 127.0.0.1:port answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as raw:
            sock = _context(tls).wrap_socket(raw, server_hostname="127.0.0.1") if tls is not None else raw
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    def __init__(
        self, binary: str, port: int, directory: Path, *, persistent: bool = False, tls: RedisTls | None = None
    ) -> None:
        self.binary = binary
        self.port = port
        self.directory = directory
        self.persistent = persistent
        self.tls = tls
        self.process: subprocess.Popen[bytes] | None = None

    @classmethod
    def start_new(cls, *, persistent: bool = False, tls: RedisTls | None = None) -> RedisServer:
        directory = Path(tempfile.mkdtemp(prefix="agentd-redis-"))
        server = cls(redis_server_binary(), free_port(), directory, persistent=persistent, tls=tls)
        try:
            server.start()
        except BaseException:
            server.close()
            raise
        return server

    @property
    def url(self) -> str:
        return f"{'rediss' if self.tls else 'redis'}://127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    def start(self) -> None:
        """Starts the server on `port` and waits until it answers PING."""
        if self.process is not None:
            raise RuntimeError("redis-server is already running")
        tls = self.tls
        listen = ("--port", str(self.port)) if tls is None else (
            "--port", "0", "--tls-port", str(self.port), "--tls-cert-file", str(tls.cert),
            "--tls-key-file", str(tls.key), "--tls-ca-cert-file", str(tls.ca),
            "--tls-auth-clients", "yes" if tls.client else "no",
        )  # fmt: skip
        args = [
            self.binary,
            *listen,
            "--bind", "127.0.0.1",
            "--save", "",
            *(("--appendonly", "yes", "--appendfsync", "always") if self.persistent else ("--appendonly", "no")),
            "--daemonize", "no",
            "--dir", str(self.directory),
            "--logfile", str(self.log),
        ]  # fmt: skip
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, cwd=self.directory)
        deadline = time.monotonic() + STARTUP_SECONDS
        while not ping(self.port, tls=self.tls):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
                pytest.fail(f"redis-server did not start on 127.0.0.1:{self.port}:\n{log}", pytrace=False)
            time.sleep(0.02)

    def stop(self) -> None:
        """SIGTERM, wait, then SIGKILL; the port is free again afterwards."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is saved on the way out."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


def running_redis_server(*, persistent: bool = False) -> Iterator[RedisServer]:
    """For a fixture: `yield from running_redis_server()`."""
    server = RedisServer.start_new(persistent=persistent)
    try:
        yield server
    finally:
        server.close()
