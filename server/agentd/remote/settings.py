"""The options of a `remote` processor entry, and the channel they describe.

    { name = "remote", options = { id = "pii-go", target = "dns:///pii:50070",
      timeout_ms = 2000, on_error = "fail-closed" } }

TLS and the bearer token take the same shape as agentd's own clients take
them (`clients/python`'s `TLS` and `token`): `tls = true` (the system's
roots) or `tls = { ca_file, cert_file, key_file, server_name }` (mutual TLS
with both cert and key); `token = "..."` or `token_env = "VAR"`. As in the
clients, a token over plaintext goes only to a loopback target: a token
sent in clear over a network is a token given away.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, get_args

import grpc

from agentd.runtime.processors.factory import dataclass_from_options, option_reader

OnError = Literal["fail-open", "fail-closed", "tripwire"]
ON_ERROR: Final[tuple[OnError, ...]] = get_args(OnError)
#: Bounds a caller-supplied option cannot lift.
MAX_TIMEOUT_MS: Final = 600_000
MAX_MESSAGE_BYTES: Final = 16 * 1024 * 1024


@dataclass(frozen=True)
class RemoteTLS:
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: str | None) -> bytes | None:
            return None if path is None else Path(path).read_bytes()

        return grpc.ssl_channel_credentials(read(self.ca_file), read(self.key_file), read(self.cert_file))


@dataclass(frozen=True)
class _Options:
    """The options as written (snake_case or camelCase)."""

    target: str = ""
    id: str = ""
    timeout_ms: int = 2000
    on_error: str = "fail-closed"
    tls: Any = None
    token: str | None = None
    token_env: str | None = None
    #: Passed to the processor service untouched, in the stream's `open`.
    config: dict[str, Any] = field(default_factory=dict)


_read = option_reader(_Options)


@dataclass(frozen=True)
class RemoteSettings:
    target: str
    id: str
    timeout: float
    on_error: OnError
    tls: RemoteTLS | None
    token: str | None
    config: dict[str, Any]

    @property
    def channel_key(self) -> tuple[str, RemoteTLS | None]:
        return (self.target, self.tls)


def parse(options: Mapping[str, Any]) -> RemoteSettings:
    """Raises ValueError naming the option at fault."""
    o = _Options(**_read(options))
    if not isinstance(o.target, str) or not o.target:
        raise ValueError("remote: option 'target' is required (e.g. 'dns:///pii:50070')")
    if not isinstance(o.timeout_ms, int) or isinstance(o.timeout_ms, bool) or not 0 < o.timeout_ms <= MAX_TIMEOUT_MS:
        raise ValueError(f"remote: option 'timeoutMs' must be an integer in 1..{MAX_TIMEOUT_MS}")
    if o.on_error not in ON_ERROR:
        raise ValueError(f"remote: option 'onError' must be one of {', '.join(ON_ERROR)}, not {o.on_error!r}")
    if not isinstance(o.config, dict):
        raise ValueError("remote: option 'config' must be a table")
    tls = _tls(o.tls)
    token = _token(o.token, o.token_env)
    if token is not None and tls is None and not is_loopback(o.target):
        raise ValueError("remote: a token is sent over plaintext only to a loopback target; set 'tls'")
    processor_id = o.id or f"remote:{o.target}"
    return RemoteSettings(o.target, processor_id, o.timeout_ms / 1000, o.on_error, tls, token, dict(o.config))


def _tls(value: Any) -> RemoteTLS | None:
    if value is None or value is False:
        return None
    if value is True:
        return RemoteTLS()
    if not isinstance(value, dict):
        raise ValueError("remote: option 'tls' is true or a table {ca_file, cert_file, key_file, server_name}")
    tls: RemoteTLS = dataclass_from_options(RemoteTLS, value, "remote: option 'tls'")
    if (tls.cert_file is None) != (tls.key_file is None):
        raise ValueError("remote: tls cert_file and key_file go together (mutual TLS)")
    for name in ("ca_file", "cert_file", "key_file"):
        path = getattr(tls, name)
        if path is not None and not Path(path).is_file():
            raise ValueError(f"remote: tls {name} {path!r} is not a readable file")
    return tls


def _token(token: str | None, env: str | None) -> str | None:
    if token is not None and env is not None:
        raise ValueError("remote: options 'token' and 'tokenEnv' exclude each other")
    if env is not None:
        value = os.environ.get(env, "").strip()
        if not value:
            raise ValueError(f"remote: option 'tokenEnv' names {env!r}, which is not set")
        return value
    return token.strip() or None if isinstance(token, str) else None


def _host(target: str) -> str:
    if target.startswith("unix:"):
        return "localhost"
    address = target
    for scheme in ("dns:///", "passthrough:///", "ipv4:", "ipv6:"):
        if address.startswith(scheme):
            address = address[len(scheme) :].split(",", 1)[0]
            break
    if address.startswith("["):  # [::1]:50070
        return address[1 : address.find("]")]
    if address.count(":") > 1:  # a bare IPv6 address
        return address
    return address.rsplit(":", 1)[0] if ":" in address else address


def is_loopback(target: str) -> bool:
    host = _host(target)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def channel(settings: RemoteSettings) -> grpc.aio.Channel:
    options: list[tuple[str, Any]] = [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ]
    if settings.tls is None:
        return grpc.aio.insecure_channel(settings.target, options=options)
    if settings.tls.server_name:
        options.append(("grpc.ssl_target_name_override", settings.tls.server_name))
    return grpc.aio.secure_channel(settings.target, settings.tls.credentials(), options=options)
