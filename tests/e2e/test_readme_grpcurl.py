"""Every grpcurl command in README.md, run as written (the address swapped)
against a fresh server on the embedded defaults: the README's examples stay
true, and together they call every agentd service.

The Security section's commands (`-cacert`) run against servers made of that
section's own TOML (a token server with TLS; a mutual-TLS one), with a CA
and certificates made in the test under the README's file names, a token in
place of `$AGENTD_TOKEN`, and its hash in place of the example's.

The Tools section's commands run against a server made of that section's
`agentd.toml`, in a folder that has the checkout's `examples/` and `.venv`
(its MCP server is `examples/mcp/units_server.py`, run by `.venv/bin/python`)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from agentd.auth_config import parse_auth
from agentd.runtime.mcp_tools import parse_server
from support.polling import until_sync

from .secure import CONFORMANCE_DIR, Pki, make_pki, new_caller, start_secure_server
from .serverproc import DEFAULT_CONFIG, REPO_ROOT, ServerProcess, own_sqlite, start_server
from .test_grpcurl import AGENTD_SERVICES, RUN_TIMEOUT_S, grpcurl, json_documents, ok_output, run_grpcurl

__all__ = ["grpcurl"]  # the fixture, shared with test_grpcurl

README_ADDRESS = "127.0.0.1:50051"


def readme_commands(text: str | None = None) -> list[list[str]]:
    """The grpcurl commands of the README's sh blocks (or `text`'s), as argument lists."""
    readme = (REPO_ROOT / "README.md").read_text() if text is None else text
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
    server = start_server(config=own_sqlite(DEFAULT_CONFIG, tmp_path), log_dir=tmp_path)  # the README's agentd.toml
    try:
        server.wait_serving(timeout=30)
        tools = readme_commands(section("Tools"))  # run against the Tools section's own server, below
        commands = [words for words in readme_commands() if words not in tools]
        plaintext = [words for words in commands if words[0] == "-plaintext"]
        assert len(plaintext) > 15
        assert all("-cacert" in words for words in commands if words not in plaintext), commands
        for words in plaintext:
            assert README_ADDRESS in words, words
            args = [w for w in words[1:] if w != README_ADDRESS]
            at = words.index(README_ADDRESS) - 1  # options before the address, verb/method after
            result = run_grpcurl(grpcurl, server, *args[:at], "--", *args[at:])
            out = ok_output(result, server)
            if words[-1].count("/") == 1 and "." in words[-1]:
                assert json_documents(out), f"{words[-1]} printed nothing"
    finally:
        server.stop(timeout=10)


def section(title: str) -> str:
    readme = (REPO_ROOT / "README.md").read_text()
    start = readme.index(f"\n## {title}\n")
    return readme[start : readme.index("\n## ", start + 1)]


def security_section() -> str:
    return section("Security")


def test_every_tools_readme_command_succeeds(grpcurl: str, tmp_path: Path) -> None:
    text = section("Tools")
    stdio_block, http_block = re.findall(r"```toml\n(.*?)```", text, re.S)
    parse_server(tomllib.loads(http_block)["mcp_servers"][0], "mcp_servers[0]")  # the URL example is valid
    (tmp_path / "agentd.toml").write_text(stdio_block, encoding="utf-8")
    (tmp_path / "examples").symlink_to(REPO_ROOT / "examples")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))  # the environment agentd and the SDK are installed in
    commands = readme_commands(text)
    assert len(commands) >= 2 and all(README_ADDRESS in words for words in commands), commands
    server = start_server(config=tmp_path / "agentd.toml", log_dir=tmp_path / "log", cwd=tmp_path)
    try:
        server.wait_serving(timeout=30)
        until_sync(  # the MCP server may still be starting when agentd serves
            lambda: ok_output(
                run_grpcurl(grpcurl, server, "-d", '{"agentId": "converter"}', "--", "agentd.v1.AgentService/GetAgent"),
                server,
            ),
            holds=lambda agent: "convert_temperature" in agent,
            within=60,
            step=0.2,
            what="the MCP tool on the agent",
        )
        outputs = []
        for words in commands:
            args = [w for w in words[1:] if w != README_ADDRESS]
            at = words.index(README_ADDRESS) - 1
            outputs.append(
                json_documents(ok_output(run_grpcurl(grpcurl, server, *args[:at], "--", *args[at:]), server))
            )
        (agent,), (reply,), (workflow,) = outputs
        tools = {t["name"]: t for t in agent["agent"]["tools"]}
        assert set(tools) == {"convert_temperature", "convert_length", "echo-twice"}
        assert {tools[name]["source"] for name in ("convert_temperature", "convert_length")} == {"mcp:units"}
        assert reply["tool_results"][0]["result"] == {"result": 212}
        assert reply["text"] == "212 F"
        assert workflow["tool_results"][0]["result"] == "hello" and workflow["text"] == "done", workflow
    finally:
        server.stop(timeout=10)


def _secure_grpcurl(grpcurl: str, words: list[str], server: ServerProcess, token: str, cwd: Path) -> str:
    """A README command as written, but for the address and `$AGENTD_TOKEN`."""
    args = [server.addr if w == README_ADDRESS else w.replace("$AGENTD_TOKEN", token) for w in words]
    result = subprocess.run(
        [grpcurl, "-max-time", "30", *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, cwd=cwd, check=False
    )
    return ok_output(result, server)


def test_every_security_readme_command_succeeds(grpcurl: str, tmp_path: Path) -> None:
    section = security_section()
    token_block, jwt_block, mtls_block = re.findall(r"```toml\n(.*?)```", section, re.S)
    parse_auth(tomllib.loads(jwt_block)["auth"])  # the JWT example is a valid [auth] table
    subject = tomllib.loads(mtls_block)["auth"]["certificates"][0]["subject"]
    pki: Pki = make_pki(tmp_path, client_subject=subject)  # ca.pem, server.pem, client.pem, ...: the README's names
    entry = tomllib.loads(token_block)["auth"]["tokens"][0]
    caller = new_caller(entry["tenant"], entry["subject"], entry["roles"], entry["resources"])
    digest = re.search(r'sha256 = "([0-9a-f]{64})"', caller.toml)
    assert digest is not None
    token_config = re.sub(r'sha256 = "[0-9a-f]{64}"', f'sha256 = "{digest.group(1)}"', token_block)
    assert token_config != token_block, "the README's [[auth.tokens]] example has no sha256 line"
    agents = (CONFORMANCE_DIR / "agentd.toml").read_text(encoding="utf-8")
    (tmp_path / "agentd.toml").write_text(f"{agents}\n{token_config}", encoding="utf-8")
    (tmp_path / "agentd-mtls.toml").write_text(f"{agents}\n{mtls_block}", encoding="utf-8")

    commands = [words for words in readme_commands() if "-cacert" in words]
    assert len(commands) >= 5 and all(README_ADDRESS in words for words in commands), commands
    app = ["--app", "tests.conformance.app"]
    servers: list[ServerProcess] = []
    try:
        tokens = start_secure_server(tmp_path / "agentd.toml", pki, extra_args=app, log_dir=tmp_path / "token")
        servers.append(tokens)
        mutual = start_secure_server(
            tmp_path / "agentd-mtls.toml", pki, extra_args=app, log_dir=tmp_path / "mtls", client_cert=True
        )
        servers.append(mutual)
        for words in commands:
            server = mutual if "-cert" in words else tokens
            out = _secure_grpcurl(grpcurl, words, server, caller.token, tmp_path)
            if words[-1].count("/") == 1 and "." in words[-1]:
                assert json_documents(out), f"{words[-1]} printed nothing"
        # What the README says of reflection = "authenticated": no token, no schema.
        anonymous = subprocess.run(
            [grpcurl, "-max-time", "30", "-cacert", "ca.pem", tokens.addr, "list"],
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            cwd=tmp_path,
            check=False,
        )
        assert anonymous.returncode != 0 and "Unauthenticated" in anonymous.stderr, anonymous
    finally:
        for server in servers:
            server.stop(timeout=10)
