"""The caller's tenant on the way in and out: every id a request names is
checked (no control characters) and scoped to the caller's tenant
(`identity.scoped`), and every reply is given back with the tenant's ids as
the caller knows them. A resource the caller may not act for, and anything of
another tenant, is NOT_FOUND: it does not exist for this caller."""

from __future__ import annotations

from google.protobuf import message

from agentd.grpc.authz import caller, check_id_chars
from agentd.grpc.walk import map_strings
from agentd.runtime.errors import NotFound
from agentd.runtime.identity import DEFAULT_TENANT, SEPARATOR, Identity, tenant_of

__all__ = ["run_in_tenant", "scope_id", "scope_resource", "unscope_message"]


def scope_id(value: str, field: str, identity: Identity | None = None) -> str:
    """A thread, notification or cache id from the request, scoped to the caller's tenant."""
    check_id_chars(value, field)
    return (identity or caller()).scoped(value)


def scope_resource(value: str, field: str, identity: Identity | None = None) -> str:
    """A resource id from the request: one the caller may act for (else its
    thread is NOT_FOUND to it), scoped to the caller's tenant."""
    who = identity or caller()
    check_id_chars(value, field)
    if value and not who.may_act_for(value):
        raise NotFound(f"no such {field.rsplit('.', 1)[-1]} for this caller", "THREAD_NOT_FOUND", {"field": field})
    return who.scoped(value)


def run_in_tenant(thread_id: str, resource_id: str, identity: Identity | None = None) -> bool:
    """Whether a run found by its id alone (its scoped thread and resource) is
    one the caller may see."""
    who = identity or caller()
    return tenant_of(thread_id) == who.tenant and who.may_act_for(who.unscoped(resource_id))


def unscope_message(msg: message.Message, tenant: str) -> None:
    """Every string in a reply that is a scoped id of `tenant`, as the tenant
    knows it (in place; a no-op for tenant `default`, whose ids are unscoped)."""
    if tenant == DEFAULT_TENANT:
        return
    prefix = f"{tenant}{SEPARATOR}"
    map_strings(msg, lambda value: value[len(prefix) :] if value.startswith(prefix) else value)
