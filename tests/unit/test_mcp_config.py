"""`[[mcp_servers]]` and per-agent `tools` in agentd.toml: what is accepted,
what is refused (naming the key), and the servers' secrets redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd import config
from agentd.runtime.mcp_tools import McpToolRef, McpToolSettings
from agentd.runtime.redact import redact


def load(tmp_path: Path, text: str) -> config.Config:
    (tmp_path / "agentd.toml").write_text('[storage]\nbackend = "memory"\n' + text, encoding="utf-8")
    return config.load(tmp_path / "agentd.toml", env={})


SERVERS = """
[[mcp_servers]]
id = "github"
command = "github-mcp"
args = ["--stdio"]
cwd = "servers"
env = { GITHUB_TOKEN = "ghp-not-a-real-token-1234", LOG_LEVEL = "debug-level" }

[mcp_servers.tools.create_issue]
background = true

[[mcp_servers]]
id = "search"
url = "https://search.example/mcp"
headers = { Authorization = "Bearer search-secret-987654" }
timeout_seconds = 5
"""


def test_servers_and_selections_are_read(tmp_path: Path) -> None:
    cfg = load(
        tmp_path,
        SERVERS
        + """
[[agents]]
id = "by-server"
tools = { mcp = ["github", "search:web_*"] }

[[agents]]
id = "by-name"
tools = ["create_issue", "search:*"]
""",
    )
    github, search = (cfg.mcp.connections[i].spec for i in ("github", "search"))
    assert (github.transport, github.command, github.args) == ("stdio", "github-mcp", ("--stdio",))
    assert github.cwd == str(tmp_path / "servers")  # relative to the config file's folder
    assert github.settings_for("create_issue") == McpToolSettings(background=True)
    assert github.settings_for("other") == McpToolSettings()
    assert (search.transport, search.url, search.timeout_seconds) == ("streamable-http", search.url, 5.0)
    by_server, by_name = cfg.agents
    assert by_server.tool_sources[0].refs == (McpToolRef("github", "*"), McpToolRef("search", "web_*"))  # type: ignore[attr-defined]
    assert by_name.tool_sources[0].refs == (McpToolRef(None, "create_issue"), McpToolRef("search", "*"))  # type: ignore[attr-defined]


def test_the_servers_secrets_are_redacted(tmp_path: Path) -> None:
    cfg = load(tmp_path, SERVERS)
    text = "ghp-not-a-real-token-1234 search-secret-987654 debug-level"
    assert redact(text) == "[REDACTED] [REDACTED] debug-level"  # env named like a secret, every header
    assert "search-secret" not in repr(cfg.mcp.connections["search"].spec)
    assert "ghp-not" not in repr(cfg.mcp.connections["github"].spec)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[mcp_servers]]\nid = "x"\n', "mcp_servers[0]: exactly one of command (stdio) and url"),
        ('[[mcp_servers]]\nid = "x"\ncommand = "a"\nurl = "http://h/mcp"\n', "exactly one of command"),
        ('[[mcp_servers]]\ncommand = "a"\n', "mcp_servers[0].id: required"),
        ('[[mcp_servers]]\nid = "a:b"\ncommand = "a"\n', "without ':'"),
        ('[[mcp_servers]]\nid = "x"\nurl = "ftp://h"\n', "mcp_servers[0].url: an http:// or https:// URL"),
        ('[[mcp_servers]]\nid = "x"\nurl = "http://h/mcp"\nargs = ["a"]\n', "mcp_servers[0].args: only for a command"),
        ('[[mcp_servers]]\nid = "x"\ncommand = "a"\nheaders = {A = "b"}\n', "mcp_servers[0].headers: only for a url"),
        ('[[mcp_servers]]\nid = "x"\ncommand = "a"\ntimeout_seconds = 0\n', "timeout_seconds: a positive number"),
        ('[[mcp_servers]]\nid = "x"\ncommand = "a"\nport = 1\n', "mcp_servers[0]: unknown key(s) port"),
        ('[[mcp_servers]]\nid = "x"\ncommand = "a"\n[[mcp_servers]]\nid = "x"\ncommand = "b"\n', "defined twice"),
        (
            '[[mcp_servers]]\nid = "x"\ncommand = "a"\n[mcp_servers.tools.t]\nbackground = "yes"\n',
            "mcp_servers[0].tools.t.background: true or false",
        ),
        ('[[agents]]\nid = "a"\ntools = { mcp = ["nope"] }\n', "agents[0].tools.mcp[0]: no MCP server 'nope'"),
        ('[[agents]]\nid = "a"\ntools = ["nope:x"]\n', "agents[0].tools[0]: no MCP server 'nope'"),
        ('[[agents]]\nid = "a"\ntools = [":x"]\n', "agents[0].tools[0]: ':x' is not"),
        ('[[agents]]\nid = "a"\ntools = { python = ["x"] }\n', "agents[0].tools: unknown key(s) python"),
        ('[[agents]]\nid = "a"\ntools = "x"\n', "agents[0].tools: a list of strings"),
    ],
)
def test_mistakes_name_the_key(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(config.ConfigError) as info:
        load(tmp_path, text)
    assert message in str(info.value)


def test_mcp_servers_come_from_the_file_only(tmp_path: Path) -> None:
    (tmp_path / "agentd.toml").write_text('[storage]\nbackend = "memory"\n', encoding="utf-8")
    env = {"AGENTD_MCP_SERVERS": '[{"id": "x", "command": "x"}]'}
    assert len(config.load(tmp_path / "agentd.toml", env=env).mcp) == 0
    with pytest.raises(config.ConfigError) as info:
        config.load(tmp_path / "agentd.toml", env={"AGENTD_MCP_SERVERS__ID": "x"})
    assert "AGENTD_MCP_SERVERS__ID: agentd has no [mcp_servers] table" in str(info.value)
