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

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agentd.grpc.auth import Authenticator, Credential, JWTSettings, identity
from agentd.grpc.gate import Limits
from agentd.grpc.tls import TLSSettings

__all__ = ["AuthSettings", "parse_auth", "parse_tls"]


class AuthConfigError(ValueError):
    """`[auth]` or `[server.tls]` is invalid; the message names the key."""


@dataclass(frozen=True)
class AuthSettings:
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


def _keys(table: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise AuthConfigError(f"{where}: must be a table")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise AuthConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})")
    return table


def _entries(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise AuthConfigError(f"{where}: a list of tables ([[{where}]])")
    return value


def _path(value: Any, base: Path | None) -> Any:
    """A file named relative to the config file's folder."""
    if not isinstance(value, str) or base is None or Path(value).is_absolute():
        return value
    return str(base / value)


def parse_auth(table: Any, base: Path | None = None) -> AuthSettings:
    auth = _keys(table, {"mode", "allow_unauthenticated_network", "tokens", "jwt", "certificates", "limits"}, "auth")
    mode = auth.get("mode", "none")
    modes = tuple([mode] if isinstance(mode, str) else mode)
    allow = auth.get("allow_unauthenticated_network", False)
    if not isinstance(allow, bool):
        raise AuthConfigError("auth.allow_unauthenticated_network: true or false")
    try:
        tokens = []
        for i, entry in enumerate(_entries(auth.get("tokens", []), "auth.tokens")):
            where = f"auth.tokens[{i}]"
            t = _keys(entry, {"sha256", "tenant", "subject", "roles", "resources"}, where)
            digest = str(t.get("sha256", "")).lower()
            if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
                raise AuthConfigError(f"{where}.sha256: the hex SHA-256 of the token (agentd token new prints it)")
            tokens.append(
                Credential(
                    digest,
                    identity(t.get("tenant"), t.get("subject"), t.get("roles"), t.get("resources"), "token", where),
                )
            )
        certificates = []
        for i, entry in enumerate(_entries(auth.get("certificates", []), "auth.certificates")):
            where = f"auth.certificates[{i}]"
            c = _keys(entry, {"subject", "tenant", "roles", "resources"}, where)
            subject = c.get("subject")
            if not isinstance(subject, str) or not subject:
                raise AuthConfigError(f"{where}.subject: the certificate's SAN URI or CN")
            certificates.append(
                Credential(
                    subject, identity(c.get("tenant"), subject, c.get("roles"), c.get("resources"), "mtls", where)
                )
            )
        jwt = None
        if "jwt" in auth:
            names = {f.name for f in fields(JWTSettings)}
            j = _keys(auth["jwt"], names, "auth.jwt")
            values: dict[str, Any] = {k: tuple(v) if k == "algorithms" else v for k, v in j.items()}
            if "jwks_file" in values:
                values["jwks_file"] = _path(values["jwks_file"], base)
            jwt = JWTSettings(**values)
        limits_table = _keys(auth.get("limits", {}), {f.name for f in fields(Limits)}, "auth.limits")
        limits = Limits(**limits_table)
    except (TypeError, ValueError) as exc:
        raise AuthConfigError(str(exc)) from None
    settings = AuthSettings(modes, allow, tuple(tokens), jwt, tuple(certificates), limits)
    settings.authenticator()  # every mode's settings are checked now, not at the first call
    return settings


def parse_tls(table: Any, base: Path | None = None) -> TLSSettings | None:
    if table is None:
        return None
    tls = _keys(table, {"cert_file", "key_file", "client_ca_file", "require_client_cert"}, "server.tls")
    if not tls.get("cert_file") or not tls.get("key_file"):
        raise AuthConfigError("server.tls: cert_file and key_file are required")
    try:
        return TLSSettings(
            _path(tls["cert_file"], base),
            _path(tls["key_file"], base),
            _path(tls.get("client_ca_file"), base),
            bool(tls.get("require_client_cert", False)),
        )
    except ValueError as exc:
        raise AuthConfigError(str(exc)) from None
