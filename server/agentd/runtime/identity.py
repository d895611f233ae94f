"""Who is calling: a tenant, a subject, roles, and the resources it may act
for; and how tenancy becomes part of every key.

Every id a caller names (thread, resource, run, notification, cache key) is
scoped to the caller's tenant before the runtime sees it (`scoped`), so the
threads map, chunk logs, leases, stored rows, the outbox, notifications and
cache entries of two tenants never meet, whatever ids they use. Tenant
`default` (the only one without authentication, and the owner of data stored
before tenancy) keeps its ids as they are; another tenant's ids carry its
name and a separator no caller's id may contain.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "ANONYMOUS",
    "DEFAULT_TENANT",
    "ROLES",
    "SEPARATOR",
    "SUBJECT_KEY",
    "TENANT_KEY",
    "Identity",
    "Role",
    "check_tenant_name",
    "scoped",
    "tenant_of",
    "unscoped",
]

Role = Literal["reader", "writer", "admin"]
#: Each role can do what the ones before it can.
ROLES: Final[tuple[Role, ...]] = ("reader", "writer", "admin")
DEFAULT_TENANT: Final = "default"
#: Separates a tenant from an id in a scoped id; refused in every id a caller sends.
SEPARATOR: Final = "\x1f"
#: Reserved request-context keys (callers cannot set `agentd.*` keys): what processors see.
TENANT_KEY: Final = "agentd.tenant"
SUBJECT_KEY: Final = "agentd.subject"

_TENANT_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")


def check_tenant_name(name: str) -> str:
    """ValueError unless `name` is a tenant name: lowercase letters, digits, `.`, `_`, `-`."""
    if not _TENANT_NAME.fullmatch(name):
        raise ValueError(f"tenant {name!r}: lowercase letters, digits, '.', '_' and '-', at most 63")
    return name


@dataclass(frozen=True)
class Identity:
    """Who a caller is: tenant, subject, roles and the resources it may act for."""

    tenant: str
    subject: str
    roles: frozenset[Role] = field(default_factory=frozenset)
    #: Resource-id patterns (fnmatch) within the tenant this caller may act for.
    resources: tuple[str, ...] = ("*",)
    #: How it was proven: "none", "token", "jwt" or "mtls".
    method: str = "none"

    def has(self, role: Role) -> bool:
        """Whether one of its roles is `role` or above it."""
        need = ROLES.index(role)
        return any(ROLES.index(r) >= need for r in self.roles)

    def may_act_for(self, resource_id: str) -> bool:
        return any(fnmatch.fnmatchcase(resource_id, pattern) for pattern in self.resources)

    @property
    def all_resources(self) -> bool:
        return "*" in self.resources

    def scoped(self, id: str) -> str:
        return scoped(self.tenant, id)

    def unscoped(self, id: str) -> str:
        return unscoped(self.tenant, id)


#: The caller when authentication is off: tenant `default`, every role.
ANONYMOUS: Final = Identity(DEFAULT_TENANT, "anonymous", frozenset(ROLES), ("*",), "none")


def scoped(tenant: str, id: str) -> str:
    """`id` as the runtime and the backends key it for `tenant` (empty stays empty)."""
    if not id or tenant == DEFAULT_TENANT:
        return id
    return f"{tenant}{SEPARATOR}{id}"


def unscoped(tenant: str, id: str) -> str:
    """The id the tenant knows, from a scoped id of that tenant."""
    prefix = f"{tenant}{SEPARATOR}"
    return id[len(prefix) :] if tenant != DEFAULT_TENANT and id.startswith(prefix) else id


def tenant_of(id: str) -> str:
    """The tenant a scoped id belongs to."""
    tenant, sep, _ = id.partition(SEPARATOR)
    return tenant if sep else DEFAULT_TENANT
