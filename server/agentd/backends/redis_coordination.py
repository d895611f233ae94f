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

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agentd.backends.redis_client import DEFAULT_MAX_CONNECTIONS, DEFAULT_SOCKET_TIMEOUT, pooled_client, text
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


class RedisCoordination(Coordination):
    """Thread leases on Redis: give a `url` (redis://host:port/db) or a `client`.

    A client built from `url` has a pool of at most `max_connections`; a call
    waits at most `socket_timeout` seconds for a free connection. A passed
    `client` keeps its own settings and is closed by `close()` only when
    `close_client` is true.
    """

    backend = "redis"
    shared = True

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | None = None,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        socket_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        socket_connect_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        close_client: bool | None = None,
    ) -> None:
        self.client, self._close_client = pooled_client(
            "RedisCoordination",
            url,
            client,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            max_connections=max_connections,
            close_client=close_client,
        )
        self.key_prefix = key_prefix
        self._renew = self.client.register_script(_RENEW)
        self._release = self.client.register_script(_RELEASE)
        self._transfer = self.client.register_script(_TRANSFER)

    def __repr__(self) -> str:
        return f"RedisCoordination(key_prefix={self.key_prefix!r})"

    def key(self, thread_id: str) -> str:
        """The Redis key of a thread's lease."""
        return f"{self.key_prefix}{thread_id}"

    @contextmanager
    def _failures(self, op: str, thread_id: str) -> Iterator[None]:
        try:
            yield
        except (RedisError, OSError) as exc:
            raise CoordinationError(
                f"redis coordination {op} {thread_id!r} failed: {type(exc).__name__}: {exc}"
            ) from exc

    async def acquire(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        key = self.key(thread_id)
        with self._failures("acquire", thread_id):
            if await self.client.set(key, owner, nx=True, px=ttl_ms):
                return True
            # Taken: by `owner` itself only when an earlier try of this call did set it
            # and its reply was lost (tokens are unique per holder).
            raw = await self.client.get(key)
        return raw is not None and text(raw) == owner

    async def renew(self, thread_id: str, owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        with self._failures("renew", thread_id):
            return bool(await self._renew(keys=[self.key(thread_id)], args=[owner, ttl_ms]))

    async def release(self, thread_id: str, owner: str) -> bool:
        check_lease_args(thread_id, owner)
        with self._failures("release", thread_id):
            return bool(await self._release(keys=[self.key(thread_id)], args=[owner]))

    async def transfer(self, thread_id: str, owner: str, new_owner: str, ttl_ms: int) -> bool:
        check_lease_args(thread_id, owner, ttl_ms)
        check_lease_args(thread_id, new_owner)
        with self._failures("transfer", thread_id):
            return bool(await self._transfer(keys=[self.key(thread_id)], args=[owner, new_owner, ttl_ms]))

    async def owner(self, thread_id: str) -> str | None:
        if not thread_id:
            raise ValueError("thread_id must be a non-empty string")
        with self._failures("owner", thread_id):
            raw = await self.client.get(self.key(thread_id))
        return None if raw is None else text(raw)

    async def owners(self, thread_ids: Sequence[str]) -> dict[str, str | None]:
        if not all(thread_ids):
            raise ValueError("thread ids must be non-empty strings")
        if not thread_ids:
            return {}
        with self._failures("owners", thread_ids[0]):
            raw = await self.client.mget([self.key(t) for t in thread_ids])
        return {t: None if r is None else text(r) for t, r in zip(thread_ids, raw, strict=True)}

    async def ping(self) -> bool:
        """True when the server answers (CoordinationError when it does not)."""
        with self._failures("ping", ""):
            return bool(await self.client.ping())

    async def close(self) -> None:
        if self._close_client:
            await self.client.aclose()
