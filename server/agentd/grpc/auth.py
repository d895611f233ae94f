"""Who is calling, from what the call carries: a bearer token (one of the
configured tokens, by its SHA-256, or a JWT verified against a JWKS or a
shared secret), or the client certificate of a mutual-TLS connection.

Failures are UNAUTHENTICATED with reason TOKEN_MISSING, TOKEN_INVALID,
TOKEN_EXPIRED or CERTIFICATE_UNKNOWN; the message never quotes the token."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from agentd.runtime.errors import Unauthenticated
from agentd.runtime.identity import ANONYMOUS, ROLES, Identity, Role, check_tenant_name
from agentd.runtime.lazy import lazy
from agentd.runtime.redact import add_secret

if TYPE_CHECKING:
    import jwt
else:
    jwt = lazy("jwt")  # JWT authentication only (PyJWT brings cryptography): loaded on first use

__all__ = ["MODES", "Authenticator", "Credential", "JWTSettings", "hash_token"]

MODES: Final = ("none", "token", "jwt", "mtls")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _roles(values: Any, where: str) -> frozenset[Role]:
    names = [values] if isinstance(values, str) else list(values or [])
    unknown = [r for r in names if r not in ROLES]
    if unknown:
        raise ValueError(f"{where}: unknown role(s) {unknown} (reader, writer, admin)")
    return frozenset(names)  # type: ignore[arg-type]


def identity(tenant: Any, subject: Any, roles: Any, resources: Any, method: str, where: str) -> Identity:
    if not isinstance(tenant, str) or not isinstance(subject, str) or not subject:
        raise ValueError(f"{where}: tenant and subject must be non-empty strings")
    patterns = [resources] if isinstance(resources, str) else list(resources or ["*"])
    if not all(isinstance(p, str) and p for p in patterns):
        raise ValueError(f"{where}: resources must be non-empty strings (patterns such as 'u-*')")
    return Identity(check_tenant_name(tenant), subject, _roles(roles, where), tuple(patterns), method)


@dataclass(frozen=True)
class Credential:
    """A configured way in, and who it admits: a token (`key` is its hex
    SHA-256; the token itself is never kept) or a client certificate (`key`
    is its SAN URI, or its CN)."""

    key: str
    identity: Identity


@dataclass(frozen=True)
class JWTSettings:
    """How JWTs are checked: issuer, audience and keys."""

    issuer: str | None = None
    audience: str | None = None
    #: RS256/ES256 keys: a JWKS file, or a URL fetched (and cached) when a key id is new.
    jwks_file: str | None = None
    jwks_url: str | None = None
    #: HS256: the name of the environment variable holding the shared secret.
    secret_env: str | None = None
    tenant_claim: str = "tenant"
    subject_claim: str = "sub"
    roles_claim: str = "roles"
    resources_claim: str = "resources"
    #: Seconds of clock skew tolerated on exp/nbf/iat.
    leeway: float = 30.0
    algorithms: tuple[str, ...] = field(default=("RS256", "ES256", "HS256"))


def _invalid(why: str) -> Unauthenticated:
    return Unauthenticated(f"the bearer token was refused: {why}", "TOKEN_INVALID")


class _JWTVerifier:
    def __init__(self, settings: JWTSettings) -> None:
        self.settings = settings
        self._keys: jwt.PyJWKSet | None = None
        self._client: jwt.PyJWKClient | None = None
        self._secret: str | None = None
        if settings.jwks_file:
            self._keys = jwt.PyJWKSet.from_json(Path(settings.jwks_file).read_text())
        if settings.jwks_url:
            self._client = jwt.PyJWKClient(settings.jwks_url, cache_keys=True, lifespan=300)
        if settings.secret_env:
            secret = os.environ.get(settings.secret_env)
            if not secret:
                raise ValueError(f"auth.jwt.secret_env: the environment variable {settings.secret_env} is not set")
            add_secret(secret)
            self._secret = secret
        if self._keys is None and self._client is None and self._secret is None:
            raise ValueError("auth.jwt: set jwks_file, jwks_url or secret_env")

    def _key(self, token: str) -> Any:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise _invalid("not a JWT") from exc
        algorithm = header.get("alg")
        if algorithm not in self.settings.algorithms:
            raise _invalid(f"algorithm {algorithm!r} is not accepted")
        if algorithm == "HS256":
            if self._secret is None:
                raise _invalid("HS256 is not configured")
            return self._secret
        kid = header.get("kid")
        if self._keys is not None:
            for key in self._keys.keys:
                if kid is None or key.key_id == kid:
                    return key.key
        if self._client is not None:
            try:
                return self._client.get_signing_key_from_jwt(token).key
            except jwt.PyJWTError as exc:
                raise _invalid("no key for it in the JWKS") from exc
        raise _invalid("no key for it in the JWKS")

    def verify(self, token: str) -> Identity:
        s = self.settings
        try:
            claims = jwt.decode(
                token,
                self._key(token),
                algorithms=list(s.algorithms),
                audience=s.audience,
                issuer=s.issuer,
                leeway=s.leeway,
                options={"require": ["exp"]},
            )
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the bearer token has expired", "TOKEN_EXPIRED") from None
        except jwt.InvalidAudienceError:
            raise _invalid("wrong audience") from None
        except jwt.InvalidIssuerError:
            raise _invalid("wrong issuer") from None
        except jwt.PyJWTError as exc:
            raise _invalid(type(exc).__name__) from None
        try:
            return identity(
                claims.get(s.tenant_claim),
                claims.get(s.subject_claim),
                claims.get(s.roles_claim),
                claims.get(s.resources_claim),
                "jwt",
                "the token's claims",
            )
        except ValueError as exc:
            raise _invalid(str(exc)) from None


class Authenticator:
    """Turns a call's metadata and TLS peer into an Identity. Mode "none"
    (alone) makes every caller ANONYMOUS: tenant `default`, every role."""

    def __init__(
        self,
        modes: Sequence[str] = ("none",),
        *,
        tokens: Sequence[Credential] = (),
        jwt_settings: JWTSettings | None = None,
        certificates: Sequence[Credential] = (),
    ) -> None:
        unknown = [m for m in modes if m not in MODES]
        if unknown or not modes:
            raise ValueError(f"auth.mode: {list(modes)!r}; choose from {list(MODES)}")
        if "none" in modes and len(modes) > 1:
            raise ValueError('auth.mode: "none" cannot be combined with other modes')
        self.modes = tuple(modes)
        self._tokens = {entry.key.lower(): entry.identity for entry in tokens}
        self._jwt = _JWTVerifier(jwt_settings) if "jwt" in modes and jwt_settings is not None else None
        if "jwt" in modes and self._jwt is None:
            raise ValueError('auth.mode "jwt" needs an [auth.jwt] table')
        if "token" in modes and not self._tokens:
            raise ValueError('auth.mode "token" needs at least one [[auth.tokens]] entry')
        self._certificates = {entry.key: entry.identity for entry in certificates}

    @property
    def enabled(self) -> bool:
        return self.modes != ("none",)

    def authenticate(self, metadata: Mapping[str, str], peer: Mapping[str, Sequence[bytes]]) -> Identity:
        """`metadata`: the call's invocation metadata; `peer`: its auth context
        (x509 names of a verified client certificate)."""
        if not self.enabled:
            return ANONYMOUS
        header = metadata.get("authorization", "")
        if header:
            scheme, _, token = header.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _invalid('send "authorization: Bearer <token>"')
            return self._bearer(token.strip())
        if "mtls" in self.modes:
            return self._certificate(peer)
        raise Unauthenticated('no credentials: send "authorization: Bearer <token>"', "TOKEN_MISSING")

    def _bearer(self, token: str) -> Identity:
        if "token" in self.modes:
            digest = hash_token(token)
            for known, found in self._tokens.items():
                if hmac.compare_digest(known, digest):
                    return found
        if self._jwt is not None and token.count(".") == 2:
            return self._jwt.verify(token)
        raise _invalid("unknown token")

    def _certificate(self, peer: Mapping[str, Sequence[bytes]]) -> Identity:
        names = [v.decode(errors="replace") for v in peer.get("x509_subject_alternative_name", [])]
        names += [v.decode(errors="replace") for v in peer.get("x509_common_name", [])]
        if not names:
            raise Unauthenticated(
                'no credentials: send "authorization: Bearer <token>" or a client certificate', "TOKEN_MISSING"
            )
        for name in names:
            found = self._certificates.get(name)
            if found is not None:
                return found
        raise Unauthenticated("the client certificate names no known identity", "CERTIFICATE_UNKNOWN")
