"""RedisServerCache: the server cache on a Redis server, over redis.asyncio (redis-py).

Every key is `key_prefix + key`; values are stored in the cache codec's compact
tagged JSON (bytes, tuples, datetimes and the runtime's dataclasses round-trip;
nothing is ever unpickled). TTLs are seconds, rounded up to whole seconds with a
minimum of one (SET ... EX); pinned keys and counters without a ttl never expire.

Hits, misses and writes are counted twice: in `stats` (this process) and in a
hash beside the cache (`shared_stats`, what GetCacheStats reports: replicas
sharing the cache share its counters).

Every failure (unreachable server, timeout, a command error, a value that cannot
be decoded) is counted in `stats.errors` and raised as CacheError, so callers
can fall through to working without the cache. Timeouts bound every call: the
socket connect and read timeouts, and the wait for a free pooled connection.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Unpack

from agentd.backends.redis_client import RedisBackend, RedisOptions
from agentd.runtime import codec
from agentd.runtime.cache import DEFAULT_TTL_SECONDS, CacheError, CacheStats, ServerCache

__all__ = ["DEFAULT_KEY_PREFIX", "RedisServerCache", "expire_seconds", "match_pattern"]

DEFAULT_KEY_PREFIX = "agentd:cache:"
#: Keys asked for per SCAN round trip (a hint to the server).
SCAN_COUNT = 500

# The counter starts a ttl only when INCRBY created it: a window never slides.
_INCREMENT = """
local created = redis.call('EXISTS', KEYS[1]) == 0
local value = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if created and ttl > 0 then
  redis.call('EXPIRE', KEYS[1], ttl)
end
return value
"""

# KEYS[1] the entry, KEYS[2] the shared counters: a read and its hit or miss in one round trip.
_GET = """
local value = redis.call('GET', KEYS[1])
redis.call('HINCRBY', KEYS[2], value and 'hits' or 'misses', 1)
return value
"""

# KEYS[1] the bucket; ARGV rate per second, burst. The server's clock, so
# replicas agree. Returns the seconds to wait (0: a token was taken).
_TAKE_TOKEN = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(((burst - tokens) / rate + 1) * 1000))
return tostring(wait)
"""

_GLOB = re.compile(rb"([*?\[\]\\])")


def expire_seconds(ttl: float) -> int:
    """A TTL as Redis stores it: whole seconds, rounded up, at least one."""
    return max(1, math.ceil(ttl))


def match_pattern(prefix: bytes) -> bytes:
    """A SCAN MATCH pattern for the keys that start with `prefix`, taken literally."""
    return _GLOB.sub(rb"\\\1", prefix) + b"*"


class RedisServerCache(RedisBackend, ServerCache):
    """The server cache on Redis (a RedisBackend); entries without a ttl of their own live `ttl` seconds."""

    backend = "redis"
    shared = True
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = CacheError
    label = "redis cache"

    def __init__(
        self, url: str | None = None, *, ttl: float = DEFAULT_TTL_SECONDS, **options: Unpack[RedisOptions]
    ) -> None:
        super().__init__(url, **options)
        self.ttl = ttl
        self._prefix = self._encode_key(self.key_prefix)
        self._increment = self.client.register_script(_INCREMENT)
        self._take_token = self.client.register_script(_TAKE_TOKEN)
        self._get = self.client.register_script(_GET)
        # Outside key_prefix, so keys(), size() and clear() never see it.
        self._stats_key = b"agentd:cache-stats:" + self._prefix

    def __repr__(self) -> str:
        return f"RedisServerCache(key_prefix={self.key_prefix!r}, ttl={self.ttl!r})"

    # ------------------------------------------------------------ helpers

    @staticmethod
    def _encode_key(key: str) -> bytes:
        return key.encode("utf-8", "surrogatepass")

    def _key(self, key: str) -> bytes:
        return self._prefix + self._encode_key(key)

    def _name(self, raw: bytes) -> str:
        """A stored key without the key prefix."""
        name = raw[len(self._prefix) :]
        try:
            return name.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # written by something else
            return name.decode("utf-8", "backslashreplace")

    def _seconds(self, ttl: float | None) -> int | None:
        """The EX for a write, or None for no expiry."""
        ttl = self.ttl if ttl is None else ttl
        return expire_seconds(ttl) if ttl > 0 else None

    @contextmanager
    def failures(self, what: str) -> Iterator[None]:
        """Counts every failure in stats.errors (and raises it as CacheError)."""
        try:
            with super().failures(what):
                yield
        except CacheError:
            self.stats.errors += 1
            raise

    def _failures(self, op: str, key: str = "") -> AbstractContextManager[None]:
        return self.failures(f"{op} {key!r}" if key else op)

    async def _pages(self, prefix: str) -> AsyncIterator[list[bytes]]:
        """SCAN over the keys starting with key_prefix + prefix, a page at a time
        (a key may come twice; deleting keys between pages is safe)."""
        cursor: int = 0
        pattern = match_pattern(self._key(prefix))
        while True:
            cursor, page = await self.client.scan(cursor, match=pattern, count=SCAN_COUNT)
            if page:  # bytes, or str from a passed client with decode_responses
                yield [k if isinstance(k, bytes) else self._encode_key(k) for k in page]
            if cursor == 0:
                return

    # ------------------------------------------------------------ ServerCache

    async def get(self, key: str) -> Any | None:
        with self._failures("get", key):
            raw = await self._get(keys=[self._key(key), self._stats_key])
            if raw is None:
                self.stats.misses += 1
                return None
            value = codec.decode(raw)
        self.stats.hits += 1
        return value

    async def set(self, key: str, value: Any, ttl: float | None = None, *, pinned: bool = False) -> None:
        with self._failures("set", key):
            data = codec.encode(value)
            seconds = None if pinned else self._seconds(ttl)
            async with self.client.pipeline(transaction=False) as pipe:
                pipe.set(self._key(key), data, ex=seconds)
                pipe.hincrby(self._stats_key, "writes", 1)
                await pipe.execute()
        self.stats.writes += 1

    async def delete(self, key: str) -> bool:
        with self._failures("delete", key):
            return bool(await self.client.delete(self._key(key)))

    async def clear(self, prefix: str = "") -> int:
        deleted = 0
        with self._failures("clear", prefix):
            async for page in self._pages(prefix):
                deleted += int(await self.client.unlink(*page))
        return deleted

    async def keys(self, prefix: str = "") -> list[str]:
        with self._failures("keys", prefix):
            found = await self._all_keys(prefix)
        return sorted(self._name(raw) for raw in found)

    async def _all_keys(self, prefix: str) -> frozenset[bytes]:
        return frozenset([raw async for page in self._pages(prefix) for raw in page])

    async def list_push(self, key: str, value: Any) -> int:
        with self._failures("list_push", key):
            data = codec.encode(value)
            name = self._key(key)
            seconds = self._seconds(None)
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.rpush(name, data)
                if seconds is not None:  # pushing refreshes the default TTL
                    pipe.expire(name, seconds)
                results = await pipe.execute()
            return int(results[0])

    async def list_length(self, key: str) -> int:
        with self._failures("list_length", key):
            return int(await self.client.llen(self._key(key)))

    async def list_range(self, key: str, start: int = 0, end: int = -1) -> list[Any]:
        with self._failures("list_range", key):
            items = await self.client.lrange(self._key(key), start, end)
            return [codec.decode(item) for item in items]

    async def increment(self, key: str, by: int = 1, ttl: float | None = None) -> int:
        seconds = 0 if ttl is None or ttl <= 0 else expire_seconds(ttl)
        with self._failures("increment", key):
            return int(await self._increment(keys=[self._key(key)], args=[by, seconds]))

    async def take_token(self, key: str, rate: float, burst: int) -> float:
        with self._failures("take_token", key):
            return float(await self._take_token(keys=[self._key(key)], args=[rate, burst]))

    async def shared_stats(self) -> CacheStats:
        """Hits, misses and writes of every process using this cache (they are
        counted in Redis beside it); errors are this process's."""
        with self._failures("stats"):
            counts = await self.client.hgetall(self._stats_key)
        shared = {(k.decode() if isinstance(k, bytes) else str(k)): int(v) for k, v in counts.items()}
        return CacheStats(shared.get("hits", 0), shared.get("misses", 0), shared.get("writes", 0), self.stats.errors)

    async def size(self) -> int:
        with self._failures("size"):
            if not self._prefix:
                return int(await self.client.dbsize())
            return len(await self._all_keys(""))
