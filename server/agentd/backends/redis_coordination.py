"""RedisCoordination: thread leases on a Redis server, shared by agentd replicas.

Over redis.asyncio (redis-py). A lease is one string key, `key_prefix +
thread id` (default `agentd:lease:<thread id>`), holding the owner's token,
with a millisecond expiry (PX) that Redis enforces:

    acquire   SET key owner NX PX ttl (when taken: GET == owner, see below)
    renew     Lua: GET == owner -> PEXPIRE key ttl
    release   Lua: GET == owner -> DEL key
    transfer  Lua: GET == owner -> SET key new_owner PX ttl
    owner     GET key (owners: MGET)

The owner check and the change are one script, so they are atomic: a token
that no longer holds the lease never touches it. `acquire` is idempotent for
its owner (True when the key already holds the caller's token, TTL unchanged):
a SET whose reply was lost (a broken connection, retried) must not leave the
thread leased to a caller that believes it failed. Expiry runs on the Redis
server's clock, so replicas' clocks do not matter.

Errors: an unreachable server, a timeout or a command error raise
CoordinationError (the outcome is unknown; LeaseKeeper retries a renewal
while the lease cannot yet have expired).

Safety: leases are as safe as a single Redis primary: with asynchronous
replication a failover can lose a just-written lease.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Unpack

from agentd.backends.redis_client import RedisBackend, RedisOptions, text
from agentd.runtime.coordination import Coordination, CoordinationError, check_lease_args

__all__ = ["DEFAULT_KEY_PREFIX", "RedisCoordination"]

DEFAULT_KEY_PREFIX = "agentd:lease:"

# KEYS[1] the lease; ARGV[1] the caller's token; ARGV[2] the ttl in ms.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

# KEYS[1] the lease; ARGV[1] the caller's token.
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS[1] the lease; ARGV[1] the caller's token; ARGV[2] the new owner's; ARGV[3] the ttl in ms.
_TRANSFER = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return 1
end
return 0
"""


class RedisCoordination(RedisBackend, Coordination):
    """Thread leases on Redis (a RedisBackend)."""

    backend = "redis"
    shared = True
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = CoordinationError
    label = "redis coordination"

    def __init__(self, url: str | None = None, **options: Unpack[RedisOptions]) -> None:
        super().__init__(url, **options)
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._transfer = self.client.register_script(_TRANSFER)

    async def acquire(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        key = self.key(thread_id)
        with self.failures(f"acquire {thread_id!r}"):
            if await self.client.set(key, owner, nx=True, px=ttl_ms):
                return True
            # Taken: by `owner` itself only when an earlier try of this call did set it
            # and its reply was lost (tokens are unique per holder).
            raw = await self.client.get(key)
        return raw is not None and text(raw) == owner

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        with self.failures(f"renew {thread_id!r}"):
            return bool(await self._renew(keys=[self.key(thread_id)], args=[owner, ttl_ms]))

    async def release(self, thread_id: str, owner: str) -> bool:
        check_lease_args(thread_id, owner)
        with self.failures(f"release {thread_id!r}"):
            return bool(await self._release(keys=[self.key(thread_id)], args=[owner]))

    async def transfer(self, thread_id: str, owner: str, new_owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        check_lease_args(thread_id, new_owner)
        with self.failures(f"transfer {thread_id!r}"):
            return bool(await self._transfer(keys=[self.key(thread_id)], args=[owner, new_owner, ttl_ms]))

    async def owner(self, thread_id: str) -> str | None:
        if not thread_id:
            raise ValueError("thread_id must be a non-empty string")
        with self.failures(f"owner {thread_id!r}"):
            raw = await self.client.get(self.key(thread_id))
        return None if raw is None else text(raw)

    async def owners(self, thread_ids: Sequence[str]) -> dict[str, str | None]:
        if not all(thread_ids):
            raise ValueError("thread ids must be non-empty strings")
        if not thread_ids:
            return {}
        with self.failures(f"owners {thread_ids[0]!r}"):
            raw = await self.client.mget([self.key(t) for t in thread_ids])
        return {t: None if r is None else text(r) for t, r in zip(thread_ids, raw, strict=True)}
