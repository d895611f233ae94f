"""CacheService: the server cache as an operable thing."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from agentd.grpc.authz import caller
from agentd.grpc.errors import Context, unavailable_on
from agentd.grpc.values import duration_seconds, from_value, to_value
from agentd.grpc.violations import Violations
from agentd.runtime.cache import CacheEntryTooLarge, CacheError, ServerCache
from agentd.runtime.errors import ResourceExhausted
from agentd.runtime.host import Host
from agentd.runtime.identity import DEFAULT_TENANT, SEPARATOR
from agentd.runtime.lazy import lazy
from agentd.runtime.unset import UNSET, Unset
from agentd_proto.v1 import cache_service_pb2 as pb
from agentd_proto.v1 import cache_service_pb2_grpc

if TYPE_CHECKING:
    from agentd.runtime import codec, response_keys
else:
    # With the first CacheService call that shows a value or invalidates responses.
    codec = lazy("agentd.runtime.codec")
    response_keys = lazy("agentd.runtime.response_keys")

#: Longest key accepted (Redis allows more; nobody needs more).
MAX_KEY_LENGTH = 1024


def cache_errors() -> AbstractContextManager[None]:
    return unavailable_on(CacheError, "cache", "CACHE_UNAVAILABLE")


def jsonable(value: Any) -> Any:
    """A JSON view of a cached value: runtime objects in the codec's tagged form,
    bytes base64-encoded."""
    return json.loads(codec.encode(value))


def _check_key(key: str, v: Violations, field: str = "key") -> None:
    if not key:
        v.add(field, "is required")
    elif len(key) > MAX_KEY_LENGTH:
        v.add(field, f"must be at most {MAX_KEY_LENGTH} characters")
    elif SEPARATOR in key:
        v.add(field, "must not contain control characters")


def _key(key: str) -> str:
    """The caller's key, in its tenant's part of the cache."""
    return caller().scoped(key)


class CacheService(cache_service_pb2_grpc.CacheServiceServicer):
    def __init__(self, host: Host) -> None:
        self.host = host

    @property
    def cache(self) -> ServerCache:
        return self.host.cache

    async def GetCacheEntry(self, request: pb.GetCacheEntryRequest, context: Context) -> pb.GetCacheEntryResponse:
        v = Violations()
        _check_key(request.key, v)
        v.check()
        with cache_errors():
            value = await self.cache.get(_key(request.key))
        if value is None:
            return pb.GetCacheEntryResponse(found=False)
        return pb.GetCacheEntryResponse(found=True, value=to_value(jsonable(value)))

    async def SetCacheEntry(self, request: pb.SetCacheEntryRequest, context: Context) -> pb.SetCacheEntryResponse:
        v = Violations()
        _check_key(request.key, v)
        if not request.HasField("value"):
            v.add("value", "is required")
        ttl: float | None = None
        if request.HasField("ttl"):
            ttl = duration_seconds(request.ttl, "ttl", v)
            if ttl is not None and ttl <= 0:
                v.add("ttl", "must be positive; leave it unset for the default, or set pinned")
            if request.pinned:
                v.add("pinned", "a pinned entry has no ttl")
        v.check()
        with cache_errors():
            try:
                await self.cache.set(_key(request.key), from_value(request.value), ttl, pinned=request.pinned)
            except CacheEntryTooLarge as exc:  # the caller's value, not the backend, is at fault
                raise ResourceExhausted(str(exc), "CACHE_ENTRY_TOO_LARGE") from None
        return pb.SetCacheEntryResponse()

    async def DeleteCacheEntry(
        self, request: pb.DeleteCacheEntryRequest, context: Context
    ) -> pb.DeleteCacheEntryResponse:
        v = Violations()
        _check_key(request.key, v)
        v.check()
        with cache_errors():
            return pb.DeleteCacheEntryResponse(deleted=await self.cache.delete(_key(request.key)))

    async def ClearCache(self, request: pb.ClearCacheRequest, context: Context) -> pb.ClearCacheResponse:
        v = Violations()
        if not request.prefix:
            v.add("prefix", "is required (clearing everything by accident is not offered)")
        elif SEPARATOR in request.prefix:
            v.add("prefix", "must not contain control characters")
        v.check()
        prefix = _key(request.prefix)
        with cache_errors():
            if caller().tenant != DEFAULT_TENANT:
                return pb.ClearCacheResponse(deleted_count=await self.cache.clear(prefix))
            # Tenant `default`'s keys carry no tenant name: every other tenant's key is left alone.
            deleted = 0
            for key in await self.cache.keys(prefix):
                if SEPARATOR not in key:
                    deleted += await self.cache.delete(key)
            return pb.ClearCacheResponse(deleted_count=deleted)

    async def GetCacheStats(self, request: pb.GetCacheStatsRequest, context: Context) -> pb.GetCacheStatsResponse:
        with cache_errors():
            stats = await self.cache.shared_stats()
            size = await self.cache.size()
        return pb.GetCacheStatsResponse(
            hits=stats.hits,
            misses=stats.misses,
            writes=stats.writes,
            errors=stats.errors,
            size=size,
            backend=self.cache.backend,
        )

    async def InvalidateResponseCache(
        self, request: pb.InvalidateResponseCacheRequest, context: Context
    ) -> pb.InvalidateResponseCacheResponse:
        v = Violations()
        v.require(request.agent_id, "agent_id")
        which = request.WhichOneof("scope_filter")
        if which == "scope" and not request.scope:
            v.add("scope", "must not be empty; use no_scope for the unscoped entries")
        v.check()
        who = caller()
        # The tenant's entries only: the processor writes them under its scoped agent and scope.
        scope: str | Unset | None = (
            who.scoped(request.scope) if which == "scope" else None if which == "no_scope" else UNSET
        )
        with cache_errors():
            caches, agent_id = self.host.caches.values(), who.scoped(request.agent_id)
            deleted = await response_keys.invalidate_response_cache(caches, agent_id, scope)
        return pb.InvalidateResponseCacheResponse(deleted_count=deleted)
