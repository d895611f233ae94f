"""Who the client is and how it reaches the server: a bearer token
(`authorization: Bearer <token>` on every call) and TLS or mutual TLS.

    AgentdClient("agentd.internal:443", token="agentd_...", tls=TLS(ca_file="ca.pem"))
    AgentdClient(target, tls=TLS(ca_file="ca.pem", cert_file="me.pem", key_file="me-key.pem"))  # mTLS

Over TLS the token rides as gRPC call credentials composed onto the channel
credentials. gRPC refuses call credentials on a plaintext channel, so there
the header is sent as plain metadata, and only to a loopback target (a local
or sidecar server) unless `allow_insecure_token=True` says otherwise: a token
sent in clear over a network is a token given away.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

__all__ = ["TLS", "TOKEN_ENV", "Security", "is_loopback", "resolve_token", "security"]

#: Read for the token when the client is given none (`token=""` reads nothing).
TOKEN_ENV = "AGENTD_TOKEN"

PathArg = str | os.PathLike[str]


@dataclass(frozen=True)
class TLS:
    """TLS for the channel, from PEM files.

    - `ca_file`: the CA that signed the server's certificate (None: the
      system's roots).
    - `cert_file`, `key_file`: this client's certificate chain and key, for
      mutual TLS (both or neither).
    - `server_name`: the name to check the server's certificate against when
      it differs from the target's host.
    """

    ca_file: PathArg | None = None
    cert_file: PathArg | None = None
    key_file: PathArg | None = None
    server_name: str | None = None

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("TLS: cert_file and key_file go together (mutual TLS)")

    def channel_credentials(self) -> grpc.ChannelCredentials:
        """The files read now: a missing file is an error here, not at the first call."""

        def read(path: PathArg | None) -> bytes | None:
            return None if path is None else Path(path).read_bytes()

        return grpc.ssl_channel_credentials(read(self.ca_file), read(self.key_file), read(self.cert_file))

    def channel_options(self) -> list[tuple[str, Any]]:
        return [] if self.server_name is None else [("grpc.ssl_target_name_override", self.server_name)]


TLSArg = TLS | grpc.ChannelCredentials | bool | None


def resolve_token(token: str | None) -> str | None:
    """`token`, or `$AGENTD_TOKEN` when it is None; None when neither is set."""
    value = os.environ.get(TOKEN_ENV, "") if token is None else token
    return value.strip() or None


def _host(address: str) -> str:
    if address.startswith("["):  # [::1]:50051
        return address[1 : address.find("]")]
    if address.count(":") > 1:  # a bare IPv6 address
        return address
    return address.rsplit(":", 1)[0] if ":" in address else address


def is_loopback(target: str) -> bool:
    """Whether every address `target` names is on this machine: localhost,
    127.0.0.0/8, ::1 or a unix socket (with or without a gRPC scheme, and
    for `ipv4:a,b` lists, every one)."""
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    rest = target
    for scheme in ("dns:///", "dns:", "ipv4:", "ipv6:", "passthrough:///"):
        if rest.startswith(scheme):
            rest = rest[len(scheme) :]
            break
    hosts = [_host(part.strip()) for part in rest.split(",") if part.strip()]
    if not hosts:
        return False
    for host in hosts:
        if host.lower() in ("localhost", "ip6-localhost"):
            continue
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:
            return False
    return True


@dataclass(frozen=True)
class Security:
    """What a channel to one target carries: its credentials (None:
    plaintext), metadata every call adds, and channel options."""

    credentials: grpc.ChannelCredentials | None
    metadata: tuple[tuple[str, str], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()


def security(
    target: str,
    tls: TLSArg,
    token: str | None,
    *,
    allow_insecure_token: bool = False,
    metadata: Mapping[str, str] | None = None,
) -> Security:
    """How to reach `target` with `tls` (a `TLS`, ready channel credentials,
    True for the system roots, or None/False for plaintext) and `token`
    (already resolved). `metadata` is the client's own, checked for a second
    authorization header."""
    if token is not None and metadata is not None and "authorization" in metadata:
        raise ValueError("give token= or an authorization metadata entry, not both")
    if tls is True:
        tls = TLS()
    options: tuple[tuple[str, Any], ...] = ()
    if isinstance(tls, TLS):
        options = tuple(tls.channel_options())
        channel: grpc.ChannelCredentials | None = tls.channel_credentials()
    else:
        channel = tls or None
    if token is None:
        return Security(channel, (), options)
    if channel is not None:
        return Security(
            grpc.composite_channel_credentials(channel, grpc.access_token_call_credentials(token)), (), options
        )
    if not allow_insecure_token and not is_loopback(target):
        raise ValueError(
            f"a token over plaintext to {target} would cross the network in clear: "
            "connect with tls=TLS(...), or pass allow_insecure_token=True"
        )
    return Security(None, (("authorization", f"Bearer {token}"),), options)
