"""What each RPC needs of its caller, and the caller of the call in progress.

Every method of the four services must be in ROLES: `service.register`
refuses to serve a method missing from it, so a new RPC cannot go unchecked.
A role too weak is PERMISSION_DENIED (reason ROLE_REQUIRED). Objects of
another tenant, or of a resource the caller may not act for, are NOT_FOUND,
never PERMISSION_DENIED: that would tell the caller they exist."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Final

from agentd.runtime.errors import InvalidArgument, PermissionDenied
from agentd.runtime.identity import ANONYMOUS, SEPARATOR, Identity, Role

__all__ = ["CALLER", "ROLES", "caller", "check_id_chars", "require_resource", "required_role"]

_READER: Final[Role] = "reader"
_WRITER: Final[Role] = "writer"
_ADMIN: Final[Role] = "admin"

#: The role each RPC needs, by "<package.Service>/<Method>".
ROLES: Final[dict[str, Role]] = {
    "agentd.v1.AgentService/ListAgents": _READER,
    "agentd.v1.AgentService/GetAgent": _READER,
    "agentd.v1.AgentService/Generate": _WRITER,
    "agentd.v1.AgentService/Stream": _WRITER,
    "agentd.v1.AgentService/ListScores": _READER,
    # Editor overrides change an agent for every caller of the tenant: admin to write.
    "agentd.v1.AgentService/GetAgentOverrides": _READER,
    "agentd.v1.AgentService/ListAgentOverrideVersions": _READER,
    "agentd.v1.AgentService/UpdateAgentOverrides": _ADMIN,
    "agentd.v1.AgentService/DeleteAgentOverrides": _ADMIN,
    "agentd.v1.AgentService/RestoreAgentOverrides": _ADMIN,
    "agentd.v1.ThreadService/CreateThread": _WRITER,
    "agentd.v1.ThreadService/GetThread": _READER,
    # Without a resource id it lists across the tenant's resources: admin (checked by the servicer).
    "agentd.v1.ThreadService/ListThreads": _READER,
    "agentd.v1.ThreadService/UpdateThread": _WRITER,
    "agentd.v1.ThreadService/DeleteThread": _WRITER,
    "agentd.v1.ThreadService/ListMessages": _READER,
    "agentd.v1.ThreadService/Subscribe": _READER,
    "agentd.v1.ThreadService/Connect": _WRITER,
    "agentd.v1.ThreadService/AbortRun": _WRITER,
    "agentd.v1.SignalService/SendMessage": _WRITER,
    "agentd.v1.SignalService/QueueMessage": _WRITER,
    "agentd.v1.SignalService/SendSignal": _WRITER,
    "agentd.v1.SignalService/SendStateSignal": _WRITER,
    "agentd.v1.SignalService/SendNotification": _WRITER,
    "agentd.v1.SignalService/ListNotifications": _READER,
    "agentd.v1.SignalService/UpdateNotificationStatus": _WRITER,
    "agentd.v1.CacheService/GetCacheEntry": _ADMIN,
    "agentd.v1.CacheService/SetCacheEntry": _ADMIN,
    "agentd.v1.CacheService/DeleteCacheEntry": _ADMIN,
    "agentd.v1.CacheService/ClearCache": _ADMIN,
    "agentd.v1.CacheService/GetCacheStats": _ADMIN,
    "agentd.v1.CacheService/InvalidateResponseCache": _ADMIN,
}

#: The caller of the RPC being served (set by service.register's wrappers).
CALLER: ContextVar[Identity] = ContextVar("agentd_caller", default=ANONYMOUS)


def caller() -> Identity:
    return CALLER.get()


def required_role(method: str) -> Role:
    """KeyError for a method nobody decided about: the server will not serve it."""
    return ROLES[method]


def check_role(identity: Identity, method: str) -> None:
    role = ROLES[method]
    if not identity.has(role):
        raise PermissionDenied(
            f"{method.rpartition('/')[2]} needs the {role} role; {identity.subject} has "
            f"{', '.join(sorted(identity.roles)) or 'none'}",
            "ROLE_REQUIRED",
            {"required_role": role},
        )


def require_resource(identity: Identity, resource_id: str) -> bool:
    """Whether the caller may act for `resource_id` (callers turn False into NOT_FOUND)."""
    return identity.may_act_for(resource_id)


def check_id_chars(value: str, field: str) -> None:
    """Ids may not contain the tenant separator (or any control character)."""
    if SEPARATOR in value or any(ord(ch) < 32 for ch in value):
        raise InvalidArgument.field(field, "must not contain control characters")
