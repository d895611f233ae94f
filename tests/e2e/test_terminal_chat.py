"""`agentd chat` driven as a person would, in a pseudo-terminal: the scripted
model holds after its first delta until the test releases it, so the screen
must show the partial reply, then the whole one; a message another client
sends to the thread appears live, with the reply it wakes; a tool call and a
tripwire are shown marked. Against a server with a token over TLS, the chat
connects with `--token` (or `$AGENTD_TOKEN`) and `--tls-ca`, and says why
when it has no token."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from pathlib import Path

import grpc
import pytest

from agentd_proto.v1 import signal_pb2, signal_service_pb2, signal_service_pb2_grpc

from .secure import make_pki, new_caller, secure_config, start_secure_server
from .serverproc import REPO_ROOT, agentd_executable, start_server

CONFIG = """
[storage]
backend = "memory"

[[agents]]
id = "held"
model = "held/scripted"
default_options = {{ provider_options = {{ local = {{ script = [
  {{ deltas = ["Hello ", "there, ", "friend."] }},
] }}, held = {{ afterDeltas = 1, releaseFile = "{release}" }} }} }}
"""

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
CSI = re.compile(r"\x1b\[([0-9]*)([A-Za-z])")
COLUMNS = 80


class Terminal:
    """A process on a pseudo-terminal, and everything it has printed."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
        env = dict(os.environ, PYTHONUNBUFFERED="1", TERM="xterm", **(env or {}))
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO_ROOT)
        os.close(slave)
        self.screen = ""
        self.raw = ""  # with the terminal's control sequences, for `rows()`

    def read_for(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:  # the process closed the terminal
                return
            self.raw += data.decode(errors="replace")
            self.screen += ANSI.sub("", data.decode(errors="replace")).replace("\r", "")

    def rows(self) -> list[str]:
        """The screen's rows as a terminal shows them: the output played through
        a small model of one (wrapping, cursor up, column, erase below)."""
        grid: dict[int, list[str]] = {}
        row = col = 0
        pending = False  # the last column was written: the next character wraps
        i = 0
        while i < len(self.raw):
            ch = self.raw[i]
            csi = CSI.match(self.raw, i)
            if csi:
                n = int(csi.group(1) or 1)
                if csi.group(2) == "A":
                    row = max(0, row - n)
                elif csi.group(2) == "G":
                    col = n - 1
                elif csi.group(2) == "J":
                    grid[row] = grid.get(row, [])[:col]
                    grid = {r: line for r, line in grid.items() if r <= row}
                elif csi.group(2) == "K":
                    grid[row] = grid.get(row, [])[:col]
                pending = False
                i = csi.end()
                continue
            if ch == "\r":
                col, pending = 0, False
            elif ch == "\n":
                row, pending = row + 1, False
            elif ch.isprintable():
                if pending:
                    row, col, pending = row + 1, 0, False
                line = grid.setdefault(row, [])
                line.extend(" " * (col + 1 - len(line)))
                line[col] = ch
                col += 1
                if col == COLUMNS:
                    col, pending = COLUMNS - 1, True
            i += 1
        return ["".join(grid.get(r, [])).rstrip() for r in range(max(grid, default=-1) + 1)]

    def expect(self, text: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.screen:
            assert time.monotonic() < deadline, f"{text!r} never appeared; the screen:\n{self.screen}"
            self.read_for(0.05)

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        self.type("/quit")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return tmp_path / "release"


def test_the_chat_streams_a_held_reply_and_shows_another_clients_message(tmp_path: Path, release: Path) -> None:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(release=release))
    server = start_server(["--app", "tests.held_app"], config=config, log_dir=tmp_path)  # the held/ test model
    terminal: Terminal | None = None
    try:
        server.wait_serving(timeout=30)
        chat = [str(agentd_executable()), "chat", "--addr", server.addr, "--agent", "held"]
        terminal = Terminal([*chat, "--thread", "t-chat", "--resource", "me"])
        terminal.expect("connected to held on thread t-chat")
        terminal.type("hi")
        terminal.expect("agent> Hello ")
        terminal.read_for(0.5)  # the model is holding: nothing more may come
        assert "there," not in terminal.screen
        release.touch()
        terminal.expect("agent> Hello there, friend.")

        # Another client writes to the same thread: the chat shows it, then the reply it woke.
        replies_before = terminal.screen.count("Hello there, friend.")
        with grpc.insecure_channel(server.addr) as channel:
            signals = signal_service_pb2_grpc.SignalServiceStub(channel)
            signals.SendMessage(
                signal_service_pb2.SendMessageRequest(
                    agent_id="held",
                    target=signal_pb2.SignalTarget(resource_id="me", thread_id="t-chat"),
                    message=signal_pb2.MessageInput(text="hello from the other side"),
                ),
                timeout=10,
            )
        terminal.expect("[another client] hello from the other side")
        deadline = time.monotonic() + 20
        while terminal.screen.count("Hello there, friend.") == replies_before:
            assert time.monotonic() < deadline, terminal.screen
            terminal.read_for(0.05)
        assert "hi\n" in terminal.screen  # what was typed stays; our own echo is not shown twice
        assert "[another client] hi" not in terminal.screen
    finally:
        if terminal is not None:
            terminal.close()
            assert terminal.proc.returncode == 0, terminal.screen
        server.stop(timeout=10)


def test_a_line_typed_mid_reply_goes_on_a_line_of_its_own(tmp_path: Path, release: Path) -> None:
    config = tmp_path / "agentd.toml"
    config.write_text(CONFIG.format(release=release))
    server = start_server(["--app", "tests.held_app"], config=config, log_dir=tmp_path)
    terminal: Terminal | None = None
    try:
        server.wait_serving(timeout=30)
        chat = [str(agentd_executable()), "chat", "--addr", server.addr, "--agent", "held"]
        terminal = Terminal([*chat, "--thread", "t-abort", "--resource", "me"])
        terminal.expect("connected to held on thread t-abort")
        terminal.type("hi")
        terminal.expect("agent> Hello ")  # held mid-reply: the cursor is on the reply's line
        terminal.type("/abort")
        terminal.expect("[aborted")
        rows = terminal.rows()
        at = rows.index("agent> Hello")
        assert rows[at + 1] == "/abort" and rows[at + 2].startswith("[aborted"), "\n".join(rows)
    finally:
        if terminal is not None:
            terminal.close()
        release.touch()
        server.stop(timeout=10)


def test_the_chat_takes_a_token_and_a_ca_for_a_server_with_auth_over_tls(tmp_path: Path, release: Path) -> None:
    pki = make_pki(tmp_path / "pki")
    caller = new_caller("acme", "terminal", ["writer"])
    config = secure_config(CONFIG.format(release=release), tmp_path / "agentd.toml", pki, [caller])
    server = start_secure_server(config, pki, extra_args=["--app", "tests.held_app"], log_dir=tmp_path)
    release.touch()  # no holding here
    chat = [str(agentd_executable()), "chat", "--addr", server.addr, "--agent", "held", "--resource", "me"]
    terminals: list[Terminal] = []
    try:
        flags = Terminal([*chat, "--thread", "t-flags", "--token", caller.token, "--tls-ca", str(pki.ca)])
        terminals.append(flags)
        flags.expect("connected to held on thread t-flags")
        flags.type("hi")
        flags.expect("agent> Hello there, friend.")

        env = Terminal([*chat, "--thread", "t-env", "--tls-ca", str(pki.ca)], env={"AGENTD_TOKEN": caller.token})
        terminals.append(env)
        env.expect("connected to held on thread t-env")
        env.type("hi")
        env.expect("agent> Hello there, friend.")

        anonymous = Terminal([*chat, "--thread", "t-none", "--tls-ca", str(pki.ca)], env={"AGENTD_TOKEN": ""})
        anonymous.expect("cannot open the thread: UNAUTHENTICATED (TOKEN_MISSING)")
        assert anonymous.proc.wait(timeout=10) == 1
        os.close(anonymous.master)
    finally:
        for terminal in terminals:
            terminal.close()
            assert terminal.proc.returncode == 0, terminal.screen
        server.stop(timeout=10)
