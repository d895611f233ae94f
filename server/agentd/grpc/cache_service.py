"""CacheService: the server cache as an operable thing."""

from __future__ import annotations

import json
from typing import Any

from agentd.grpc import convert
from agentd.grpc.errors import Context
from agentd.grpc.validate import Violations, duration_seconds
from agentd.runtime.cache import CacheError, ServerCache
from agentd.runtime.errors import AgentdError, Unavailable
from agentd.runtime.host import Host
from agentd.runtime.response_keys import UNSET, invalidate_response_cache
from agentd_proto.v1 import cache_service_pb2 as pb

#: Longest key accepted (Redis allows more; nobody needs more).
MAX_KEY_LENGTH = 1024


def unavailable(exc: CacheError) -> AgentdError:
    return Unavailable(f"the cache backend failed: {exc}", "CACHE_UNAVAILABLE")


def jsonable(value: Any) -> Any:
    """A JSON view of a cached value: runtime objects in the codec's tagged form,
    bytes base64-encoded."""
    from agentd.runtime.cache_codec import encode

    return json.loads(encode(value))


class CacheService:
    def __init__(self, host: Host) -> None:
        self.host = host

    @property
    def cache(self) -> ServerCache:
        return self.host.cache

    @staticmethod
    def _key(key: str, v: Violations, field: str = "key") -> None:
        if not key:
            v.add(field, "is required")
        elif len(key) > MAX_KEY_LENGTH:
            v.add(field, f"must be at most {MAX_KEY_LENGTH} characters")

    async def GetCacheEntry(self, request: pb.GetCacheEntryRequest, context: Context) -> Any:
        v = Violations()
        self._key(request.key, v)
        v.check()
        try:
            value = await self.cache.get(request.key)
        except CacheError as exc:
            raise unavailable(exc) from exc
        if value is None:
            return pb.GetCacheEntryResponse(found=False)
        return pb.GetCacheEntryResponse(found=True, value=convert.to_value(jsonable(value)))

    async def SetCacheEntry(self, request: pb.SetCacheEntryRequest, context: Context) -> Any:
        v = Violations()
        self._key(request.key, v)
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
        try:
            await self.cache.set(request.key, convert.from_value(request.value), ttl, pinned=request.pinned)
        except CacheError as exc:
            raise unavailable(exc) from exc
        return pb.SetCacheEntryResponse()

    async def DeleteCacheEntry(self, request: pb.DeleteCacheEntryRequest, context: Context) -> Any:
        v = Violations()
        self._key(request.key, v)
        v.check()
        try:
            return pb.DeleteCacheEntryResponse(deleted=await self.cache.delete(request.key))
        except CacheError as exc:
            raise unavailable(exc) from exc

    async def ClearCache(self, request: pb.ClearCacheRequest, context: Context) -> Any:
        v = Violations()
        if not request.prefix:
            v.add("prefix", "is required (clearing everything by accident is not offered)")
        v.check()
        try:
            return pb.ClearCacheResponse(deleted_count=await self.cache.clear(request.prefix))
        except CacheError as exc:
            raise unavailable(exc) from exc

    async def GetCacheStats(self, request: pb.GetCacheStatsRequest, context: Context) -> Any:
        try:
            stats = await self.cache.shared_stats()
            size = await self.cache.size()
        except CacheError as exc:
            raise unavailable(exc) from exc
        return pb.GetCacheStatsResponse(
            hits=stats.hits,
            misses=stats.misses,
            writes=stats.writes,
            errors=stats.errors,
            size=size,
            backend=self.cache.backend,
        )

    async def InvalidateResponseCache(self, request: pb.InvalidateResponseCacheRequest, context: Context) -> Any:
        v = Violations()
        v.require(request.agent_id, "agent_id")
        which = request.WhichOneof("scope_filter")
        if which == "scope" and not request.scope:
            v.add("scope", "must not be empty; use no_scope for the unscoped entries")
        v.check()
        scope = request.scope if which == "scope" else None if which == "no_scope" else UNSET
        try:
            deleted = await invalidate_response_cache(self.host.caches.values(), request.agent_id, scope)
        except CacheError as exc:
            raise unavailable(exc) from exc
        return pb.InvalidateResponseCacheResponse(deleted_count=deleted)
