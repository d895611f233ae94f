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
    readme = (REPO_ROOT / "README.md").read_text()
    commands: list[list[str]] = []
    for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
        joined = block.replace("\\\n", " ")
        # A quoted JSON body may itself span lines: shlex splits the whole block,
        # then commands are cut where each `grpcurl` begins.
        words = shlex.split(joined, comments=True)
        for word in words:
            if word == "grpcurl":
                commands.append([])
            elif commands:
                commands[-1].append(word)
    return [c for c in commands if c]


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
