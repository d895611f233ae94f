"""What `[[mcp_servers]]` in agentd.toml says: how to reach one MCP server,
and which of its tools an agent selects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentd.runtime.redact import add_named_secrets, add_secret

__all__ = ["McpServerSpec", "McpToolRef", "McpToolSettings", "parse_server", "parse_tool_refs"]

_SERVER_KEYS = {"id", "command", "args", "env", "cwd", "url", "headers", "timeout_seconds", "tools"}


@dataclass(frozen=True, slots=True)
class McpToolSettings:
    """Per-tool settings under `[mcp_servers.tools.<name>]`."""

    #: Run the tool as background work: the call answers at once with a deferred
    #: result and the real one is reconciled into the thread (runtime/background.py).
    background: bool = False


@dataclass(frozen=True)
class McpServerSpec:
    """One MCP server: a command over stdio, or a streamable HTTP URL."""

    id: str
    #: The server's executable: looked up on PATH, or a path (relative: to the config file's folder).
    command: str | None = None
    args: tuple[str, ...] = ()
    #: The subprocess's extra environment; values named like secrets are redacted everywhere.
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: The subprocess's working directory (relative paths: to the config file's folder).
    cwd: str | None = None
    url: str | None = None
    #: Sent with every HTTP request; every value is treated as a secret.
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    #: How long one tool call may take before it answers an error.
    timeout_seconds: float = 60.0
    tools: Mapping[str, McpToolSettings] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Registered here, not by the config parser alone: a spec an --app builds
        # has secrets too, and they must be known before anything could log them.
        add_named_secrets(self.env)
        for value in self.headers.values():
            add_secret(value)
            add_secret(value.partition(" ")[2])  # "Bearer <token>": the token alone too
        if self.url is not None:
            add_secret(urlsplit(self.url).password)

    @property
    def transport(self) -> str:
        return "stdio" if self.command else "streamable-http"

    def settings_for(self, tool_name: str) -> McpToolSettings:
        return self.tools.get(tool_name, McpToolSettings())


@dataclass(frozen=True, slots=True)
class McpToolRef:
    """One entry of an agent's `tools`: a server's tools matching `pattern`
    (fnmatch: "*" is all of them), or with `server` None, tools of that name
    on any server."""

    server: str | None
    pattern: str

    def matches(self, server: str, tool_name: str) -> bool:
        return (self.server is None or self.server == server) and fnmatchcase(tool_name, self.pattern)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where}: a list of strings")
    return tuple(value)


def _string_table(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where}: a table of strings")
    return dict(value)


def parse_server(table: Any, where: str, base: Path | None = None) -> McpServerSpec:
    """A `[[mcp_servers]]` table; ValueError names the offending key. Its
    secrets (header values, env values named like secrets, a URL's password)
    are registered for redaction before anything could log them."""
    if not isinstance(table, dict):
        raise ValueError(f"{where}: must be a table")
    unknown = sorted(set(table) - _SERVER_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_SERVER_KEYS))})")
    server_id = table.get("id")
    if not isinstance(server_id, str) or not server_id or ":" in server_id:
        raise ValueError(f"{where}.id: required, a non-empty string without ':'")
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        raise ValueError(f"{where}: exactly one of command (stdio) and url (streamable HTTP)")
    env = _string_table(table.get("env", {}), f"{where}.env")
    headers = _string_table(table.get("headers", {}), f"{where}.headers")
    if command is not None:
        if not isinstance(command, str) or not command:
            raise ValueError(f"{where}.command: a non-empty string")
        if "headers" in table:
            raise ValueError(f"{where}.headers: only for a url server (a command server takes env)")
    else:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{where}.url: an http:// or https:// URL")
        for key in ("args", "env", "cwd"):
            if key in table:
                raise ValueError(f"{where}.{key}: only for a command server")
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise ValueError(f"{where}.cwd: a path")
    if command is not None and base is not None:
        cwd = str(base / cwd) if cwd is not None else str(base)
        if "/" in command and not Path(command).is_absolute():  # ".venv/bin/python": beside the config file
            command = str(base / command)
    timeout = table.get("timeout_seconds", 60.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ValueError(f"{where}.timeout_seconds: a positive number")
    return McpServerSpec(
        id=server_id,
        command=command,
        args=_strings(table.get("args", []), f"{where}.args"),
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        timeout_seconds=float(timeout),
        tools=_tool_settings(table.get("tools", {}), f"{where}.tools"),
    )


def _tool_settings(table: Any, where: str) -> dict[str, McpToolSettings]:
    if not isinstance(table, dict):
        raise ValueError(f"{where}: a table of tool name = {{ background = true }}")
    out: dict[str, McpToolSettings] = {}
    for name, settings in table.items():
        if not isinstance(settings, dict) or set(settings) - {"background"}:
            raise ValueError(f"{where}.{name}: a table with background")
        background = settings.get("background", False)
        if not isinstance(background, bool):
            raise ValueError(f"{where}.{name}.background: true or false")
        out[name] = McpToolSettings(background=background)
    return out


def parse_tool_refs(value: Any, where: str, servers: set[str]) -> tuple[McpToolRef, ...]:
    """An agent's `tools`: `{ mcp = ["github", "search:web_*"] }` (server ids,
    or server:tool patterns), or `["create_issue", "search:*"]` (tool names on
    any server, or server:tool patterns)."""
    by_server = isinstance(value, dict)
    if by_server:
        unknown = sorted(set(value) - {"mcp"})
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: mcp)")
        value, where = value.get("mcp", []), f"{where}.mcp"
    entries = _strings(value, where)
    refs: list[McpToolRef] = []
    for i, entry in enumerate(entries):
        server, colon, pattern = entry.partition(":")
        if not colon:
            server, pattern = (entry, "*") if by_server else ("", entry)
        if not pattern or (colon and not server):
            raise ValueError(f"{where}[{i}]: {entry!r} is not a server id, server:tool or tool name")
        if server and server not in servers:
            known = ", ".join(sorted(servers)) or "none"
            raise ValueError(f"{where}[{i}]: no MCP server {server!r} in [[mcp_servers]] (configured: {known})")
        refs.append(McpToolRef(server or None, pattern))
    return tuple(refs)
