"""agentd.toml's `[auth]` (who may call, and their limits) and `[server.tls]`.

[auth]
mode = "token"                  # "none" (default), "token", "jwt", "mtls"; a list combines them
allow_unauthenticated_network = false

[[auth.tokens]]                 # `agentd token new` prints these
sha256 = "..."                  # hex SHA-256 of the token
tenant = "acme"
subject = "billing-service"
roles = ["writer"]              # reader | writer | admin
resources = ["*"]

[auth.jwt]                      # HS256 (secret_env) or RS256/ES256 (jwks_file or jwks_url)
[[auth.certificates]]           # mode "mtls": a client certificate's SAN URI (or CN)
[auth.limits]                   # requests_per_second, burst, max_streams

[server.tls]
cert_file, key_file, client_ca_file, require_client_cert
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError
from pydantic.dataclasses import dataclass as table_dataclass

from agentd.grpc.auth import Authenticator, Credential, JWTSettings, identity
from agentd.grpc.gate import Limits
from agentd.grpc.tls import TLSSettings
from agentd.schema import Flag, Table, describe, empty_list, section

__all__ = ["AuthSettings", "AuthTable", "TLSTable", "auth_settings", "parse_auth", "tls_settings"]

_FORBID = ConfigDict(extra="forbid", defer_build=True)


class AuthConfigError(ValueError):
    """`[auth]` or `[server.tls]` is invalid; the message names the key."""


# The transport's own settings, validated key by key where they are read from
# agentd.toml or the environment (an instance is one of the transport's).
@table_dataclass(frozen=True, config=_FORBID)
class JWTTable(JWTSettings):
    """`[auth.jwt]`, checked key by key."""


@table_dataclass(frozen=True, config=_FORBID)
class LimitsTable(Limits):
    """`[auth.limits]`, checked key by key."""


@table_dataclass(frozen=True, config=_FORBID)
class TLSTable(TLSSettings):
    """`[server.tls]`, checked key by key."""


class TokenTable(Table):
    #: Checked (hex, 64 digits) with the identity, so the message says what to put there.
    sha256: str = ""
    tenant: Any = None
    subject: Any = None
    roles: Any = None
    resources: Any = None


class CertificateTable(Table):
    subject: Any = None
    tenant: Any = None
    roles: Any = None
    resources: Any = None


class AuthTable(Table):
    mode: str | list[str] = "none"
    allow_unauthenticated_network: Flag = False
    tokens: list[TokenTable] = Field(default_factory=empty_list)
    jwt: JWTTable | None = None
    certificates: list[CertificateTable] = Field(default_factory=empty_list)
    limits: LimitsTable = section()


class _File(Table):
    auth: AuthTable = section()


@dataclass(frozen=True)
class AuthSettings:
    """Who `[auth]` admits: its modes, credentials and per-caller limits."""

    modes: tuple[str, ...] = ("none",)
    allow_unauthenticated_network: bool = False
    tokens: tuple[Credential, ...] = ()
    jwt: JWTSettings | None = None
    certificates: tuple[Credential, ...] = ()
    limits: Limits = field(default_factory=Limits)

    def authenticator(self) -> Authenticator:
        try:
            return Authenticator(self.modes, tokens=self.tokens, jwt_settings=self.jwt, certificates=self.certificates)
        except (ValueError, OSError) as exc:
            raise AuthConfigError(str(exc)) from None


def _path(value: str | None, base: Path | None) -> str | None:
    """A file named relative to the config file's folder."""
    if value is None or base is None or Path(value).is_absolute():
        return value
    return str(base / value)


def parse_auth(table: Any, base: Path | None = None) -> AuthSettings:
    """An `[auth]` table on its own (as agentd.toml would hold it)."""
    try:
        auth = _File.model_validate({"auth": table}).auth
    except ValidationError as exc:
        raise AuthConfigError(describe(exc, _File, where="auth")) from None
    return auth_settings(auth, base)


def auth_settings(auth: AuthTable, base: Path | None = None) -> AuthSettings:
    """Who the validated `[auth]` table admits; every mode's settings are checked now, not at the first call."""
    modes = (auth.mode,) if isinstance(auth.mode, str) else tuple(auth.mode)
    try:
        tokens = []
        for i, t in enumerate(auth.tokens):
            where = f"auth.tokens[{i}]"
            digest = t.sha256.lower()
            if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
                raise AuthConfigError(f"{where}.sha256: the hex SHA-256 of the token (agentd token new prints it)")
            tokens.append(Credential(digest, identity(t.tenant, t.subject, t.roles, t.resources, "token", where)))
        certificates = []
        for i, c in enumerate(auth.certificates):
            where = f"auth.certificates[{i}]"
            if not isinstance(c.subject, str) or not c.subject:
                raise AuthConfigError(f"{where}.subject: the certificate's SAN URI or CN")
            certificates.append(
                Credential(c.subject, identity(c.tenant, c.subject, c.roles, c.resources, "mtls", where))
            )
        jwt = auth.jwt
        if jwt is not None and jwt.jwks_file:
            jwt = dataclasses.replace(jwt, jwks_file=_path(jwt.jwks_file, base))
    except ValueError as exc:
        raise AuthConfigError(str(exc)) from None
    settings = AuthSettings(
        modes, auth.allow_unauthenticated_network, tuple(tokens), jwt, tuple(certificates), auth.limits
    )
    settings.authenticator()
    return settings


def tls_settings(tls: TLSTable | None, base: Path | None = None) -> TLSTable | None:
    """`[server.tls]` with its files found relative to the config file's folder."""
    if tls is None:
        return None
    return dataclasses.replace(
        tls,
        cert_file=_path(tls.cert_file, base) or "",
        key_file=_path(tls.key_file, base) or "",
        client_ca_file=_path(tls.client_ca_file, base),
    )
