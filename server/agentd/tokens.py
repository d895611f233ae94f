"""`agentd token new`: a fresh random token, printed once, and the
`[[auth.tokens]]` lines that let it in (only its SHA-256 is stored)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from agentd.grpc.auth import hash_token
from agentd.runtime.identity import ROLES, check_tenant_name

__all__ = ["TOKEN_PREFIX", "new_token"]

#: Tokens carry a recognisable prefix, so a token pasted where it should not be is found (and redacted).
TOKEN_PREFIX = "agentd_"


def new_token(tenant: str, subject: str, roles: Sequence[str], resources: Sequence[str] = ("*",)) -> tuple[str, str]:
    """(the token, the TOML for agentd.toml)."""
    check_tenant_name(tenant)
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not roles:
        raise ValueError(f"--roles: {', '.join(unknown) or 'none given'}; choose from {', '.join(ROLES)}")
    if not subject:
        raise ValueError("--subject: required")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)

    def toml_list(values: Sequence[str]) -> str:
        return "[" + ", ".join(f'"{v}"' for v in values) + "]"

    lines = "\n".join(
        [
            "[[auth.tokens]]",
            f'sha256 = "{hash_token(token)}"',
            f'tenant = "{tenant}"',
            f'subject = "{subject}"',
            f"roles = {toml_list(roles)}",
            f"resources = {toml_list(resources)}",
        ]
    )
    return token, lines
