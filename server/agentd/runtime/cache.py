"""The server cache: the interface every backend implements, and the in-memory one.

TTLs are in seconds (floats allowed). A key written `pinned` (or by
`increment` without a ttl) never expires and is never evicted by the
in-memory LRU: budget counters depend on it. Time comes from an injectable
clock, so TTL tests never sleep.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from agentd.runtime.sizes import approximate_size

Clock = Callable[[], float]
DEFAULT_TTL_SECONDS = 300.0
DEFAULT_MAX_SIZE = 1000
#: The memory cache's byte bound (an estimate of its keys and values).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024


class CacheError(Exception):
    """The backend failed (unreachable, timed out, or a value it cannot decode)."""


@dataclass
class CacheStats:
    """A server cache's counters."""

    hits: int = 0
    misses: int = 0
    writes: int = 0
    errors: int = 0


class ServerCache(ABC):
    """A key-value cache shared by a server's processors and CacheService."""

    #: "memory" or "redis".
    backend: str = ""
    #: Several processes (replicas) may use it at once.
    shared: bool = False

    def __init__(self) -> None:
        self.stats = CacheStats()

    async def shared_stats(self) -> CacheStats:
        """The counters GetCacheStats reports: this process's, or, for a cache
        that several processes share, all of theirs (the backend says which)."""
        return replace(self.stats)

    def record_error(self) -> None:
        """Counts a failure a caller detected (e.g. an entry it could not use)."""
        self.stats.errors += 1

    @abstractmethod
    async def get(self, key: str) -> Any | None:
        """The value, or None when missing or expired."""

    @abstractmethod
    async def set(self, key: str, value: Any, ttl: float | None = None, *, pinned: bool = False) -> None:
        """Stores `value`; `ttl` None means the backend default; `pinned` means no expiry, no eviction."""

    @abstractmethod
    async def delete(self, key: str) -> bool:
        """True when a key was deleted."""

    @abstractmethod
    async def clear(self, prefix: str = "") -> int:
        """Deletes every key starting with `prefix`; returns how many."""

    @abstractmethod
    async def keys(self, prefix: str = "") -> list[str]:
        """The live keys starting with `prefix`."""

    @abstractmethod
    async def list_push(self, key: str, value: Any) -> int:
        """Appends to the list at `key` (created when missing); returns its new length."""

    @abstractmethod
    async def list_length(self, key: str) -> int:
        """The length of the list at `key` (0 when missing)."""

    @abstractmethod
    async def list_range(self, key: str, start: int = 0, end: int = -1) -> list[Any]:
        """Items `start`..`end` inclusive; negative indices count from the end (LRANGE)."""

    @abstractmethod
    async def increment(self, key: str, by: int = 1, ttl: float | None = None) -> int:
        """Adds `by` atomically (a missing key counts as 0); no `ttl` means no expiry (pinned)."""

    @abstractmethod
    async def size(self) -> int:
        """How many live keys the cache holds."""

    @abstractmethod
    async def take_token(self, key: str, rate: float, burst: int) -> float:
        """A token bucket at `key`, refilled at `rate` per second up to `burst`:
        takes one token and returns 0.0, or, when empty, takes nothing and
        returns the seconds until a token is there. Atomic: replicas sharing
        the cache share the bucket."""

    async def close(self) -> None:  # noqa: B027 (optional for backends without connections)
        """Releases connections."""


class CacheEntryTooLarge(CacheError):
    """The value alone is bigger than the cache may hold (`max_bytes`)."""


class _Entry:
    __slots__ = ("expires_at", "pinned", "size", "value")

    def __init__(self, value: Any, expires_at: float | None, pinned: bool, size: int) -> None:
        self.value = value
        self.expires_at = expires_at
        self.pinned = pinned
        #: approximate_size of key and value.
        self.size = size


class InMemoryServerCache(ServerCache):
    """TTL, and bounds by entry count (`max_size`) and by bytes (`max_bytes`,
    an estimate of keys and values), with least-recently-used eviction (pinned
    keys exempt). A value bigger than `max_bytes` alone is refused
    (CacheEntryTooLarge). Values are kept by reference: callers that mutate
    what they get change the cache."""

    backend = "memory"

    def __init__(
        self,
        *,
        max_size: int = DEFAULT_MAX_SIZE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ttl: float = DEFAULT_TTL_SECONDS,
        clock: Clock = time.monotonic,
    ) -> None:
        super().__init__()
        if max_size < 1:
            raise ValueError("max_size must be at least 1")
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_size = max_size
        self.max_bytes = max_bytes
        self.ttl = ttl
        self.clock = clock
        self._data: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0

    @property
    def bytes(self) -> int:
        """The estimated bytes held now."""
        return self._bytes

    def _drop(self, key: str) -> None:
        self._bytes -= self._data.pop(key).size

    def _live(self, key: str) -> _Entry | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry.expires_at is not None and entry.expires_at <= self.clock():
            self._drop(key)
            return None
        self._data.move_to_end(key)
        return entry

    def _expiry(self, ttl: float | None, pinned: bool) -> float | None:
        if pinned:
            return None
        ttl = self.ttl if ttl is None else ttl
        return None if ttl <= 0 else self.clock() + ttl

    def _store(self, key: str, value: Any, expires_at: float | None, pinned: bool, size: int | None = None) -> None:
        size = approximate_size(key) + approximate_size(value) if size is None else size
        if size > self.max_bytes:
            raise CacheEntryTooLarge(f"{key}: a value of about {size} bytes; the cache holds at most {self.max_bytes}")
        if key in self._data:
            self._drop(key)
        self._data[key] = _Entry(value, expires_at, pinned, size)
        self._bytes += size
        self._evict()

    def _grow(self, key: str, entry: _Entry, by: int) -> None:
        """An entry changed in place (a list push): count it, and keep the bounds."""
        entry.size += by
        self._bytes += by
        self._evict(keep=key)

    def _over(self) -> bool:
        return len(self._data) > self.max_size or self._bytes > self.max_bytes

    def _evict(self, keep: str | None = None) -> None:
        if not self._over():
            return
        now = self.clock()
        for key in [k for k, e in self._data.items() if e.expires_at is not None and e.expires_at <= now]:
            self._drop(key)
        for key in list(self._data):  # oldest first
            if not self._over():
                break
            if not self._data[key].pinned and key != keep:
                self._drop(key)

    async def get(self, key: str) -> Any | None:
        entry = self._live(key)
        if entry is None:
            self.stats.misses += 1
            return None
        self.stats.hits += 1
        return entry.value

    async def set(self, key: str, value: Any, ttl: float | None = None, *, pinned: bool = False) -> None:
        self._store(key, value, self._expiry(ttl, pinned), pinned)
        self.stats.writes += 1

    async def delete(self, key: str) -> bool:
        if key not in self._data:
            return False
        self._drop(key)
        return True

    async def clear(self, prefix: str = "") -> int:
        doomed = [k for k in self._data if k.startswith(prefix)]
        for key in doomed:
            self._drop(key)
        return len(doomed)

    async def keys(self, prefix: str = "") -> list[str]:
        return [k for k in list(self._data) if k.startswith(prefix) and self._live(k) is not None]

    async def list_push(self, key: str, value: Any) -> int:
        entry = self._live(key)
        if entry is None:
            self._store(key, [value], self._expiry(None, False), False)
            return 1
        if not isinstance(entry.value, list):
            raise CacheError(f"{key} is not a list")
        added = 8 + approximate_size(value)
        if entry.size + added > self.max_bytes:
            raise CacheEntryTooLarge(f"{key}: the list would outgrow the cache's {self.max_bytes} bytes")
        entry.value.append(value)
        entry.expires_at = self._expiry(None, entry.pinned)  # pushing refreshes the default TTL
        self._grow(key, entry, added)
        return len(entry.value)

    async def list_length(self, key: str) -> int:
        entry = self._live(key)
        if entry is None:
            return 0
        if not isinstance(entry.value, list):
            raise CacheError(f"{key} is not a list")
        return len(entry.value)

    async def list_range(self, key: str, start: int = 0, end: int = -1) -> list[Any]:
        entry = self._live(key)
        if entry is None:
            return []
        if not isinstance(entry.value, list):
            raise CacheError(f"{key} is not a list")
        items = entry.value
        n = len(items)
        lo = max(start + n if start < 0 else start, 0)
        hi = min(end + n if end < 0 else end, n - 1)
        return list(items[lo : hi + 1]) if lo <= hi else []

    async def increment(self, key: str, by: int = 1, ttl: float | None = None) -> int:
        entry = self._live(key)
        current = 0 if entry is None else entry.value
        if not isinstance(current, int) or isinstance(current, bool):
            raise CacheError(f"{key} does not hold a counter")
        value = current + by
        if entry is None:  # the expiry is set when the counter is created: a fixed window
            self._store(key, value, self._expiry(ttl, ttl is None), ttl is None)
        else:
            self._store(key, value, entry.expires_at, entry.pinned, entry.size)
        return value

    async def take_token(self, key: str, rate: float, burst: int) -> float:
        # No await: the read and the write of the bucket are one step on the loop.
        now = self.clock()
        entry = self._live(key)
        tokens, last = entry.value if entry is not None and isinstance(entry.value, tuple) else (float(burst), now)
        tokens = min(float(burst), tokens + (now - last) * rate)
        wait = 0.0 if tokens >= 1 else (1 - tokens) / rate
        if wait == 0.0:
            tokens -= 1
        # A full bucket needs no entry: it expires once it would have refilled.
        self._store(key, (tokens, now), now + (burst - tokens) / rate + 1, False)
        return wait

    async def size(self) -> int:
        now = self.clock()
        return sum(1 for e in self._data.values() if e.expires_at is None or e.expires_at > now)
