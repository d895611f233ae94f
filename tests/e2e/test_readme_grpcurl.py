"""Every grpcurl command in README.md, run as written (the address swapped)
against a fresh server on the embedded defaults: the README's examples stay
true, and together they call every agentd service."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

from .serverproc import REPO_ROOT, start_server
from .test_grpcurl import AGENTD_SERVICES, grpcurl, json_documents, ok_output, run_grpcurl

__all__ = ["grpcurl"]  # the fixture, shared with test_grpcurl

README_ADDRESS = "127.0.0.1:50051"


def readme_commands() -> list[list[str]]:
    """The grpcurl commands of the README's sh blocks, as argument lists."""
    readme = (REPO_ROOT / "README.md").read_text()
    commands: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        current = ""
        for line in block.splitlines():
            if current and not _complete(current):  # a continued line or a quoted body spanning lines
                current += "\n" + line
                continue
            if current:
                commands.append(_grpcurl_args(current))
            current = line if line.startswith("grpcurl ") else ""
        if current:
            commands.append(_grpcurl_args(current))
    return commands


def _complete(command: str) -> bool:
    if command.endswith("\\"):
        return False
    try:
        shlex.split(command)
    except ValueError:  # an open quote
        return False
    return True


def _grpcurl_args(command: str) -> list[str]:
    return shlex.split(command.replace("\\\n", " "), comments=True)[1:]


def test_the_readme_calls_every_service() -> None:
    methods = {c[-1].rsplit("/", 1)[0] for c in readme_commands() if "/" in c[-1]}
    assert set(AGENTD_SERVICES) <= methods, sorted(methods)


def test_every_readme_grpcurl_command_succeeds(grpcurl: str, tmp_path: Path) -> None:
    shutil.copy(REPO_ROOT / "agentd.toml", tmp_path / "agentd.toml")  # its SQLite file lands in tmp_path
    server = start_server(config=tmp_path / "agentd.toml", log_dir=tmp_path)
    try:
        server.wait_serving(timeout=30)
        commands = readme_commands()
        assert len(commands) > 15
        for words in commands:
            assert words[0] == "-plaintext" and README_ADDRESS in words, words
            args = [w for w in words[1:] if w != README_ADDRESS]
            at = words.index(README_ADDRESS) - 1  # options before the address, verb/method after
            result = run_grpcurl(grpcurl, server, *args[:at], "--", *args[at:])
            out = ok_output(result, server)
            if words[-1].count("/") == 1 and "." in words[-1]:
                assert json_documents(out), f"{words[-1]} printed nothing"
    finally:
        server.stop(timeout=10)
