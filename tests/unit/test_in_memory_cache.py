"""InMemoryServerCache alone: expiry and LRU eviction through the injected
clock, counters, and its stats. The suite every cache backend passes is
tests/redis/test_cache_backends.py."""

from __future__ import annotations

from agentd.runtime.cache import CacheStats, InMemoryServerCache
from support.clocks import Clock


async def test_memory_ttl_expiry_through_the_clock() -> None:
    clock = Clock()
    cache = InMemoryServerCache(clock=clock, ttl=300)
    await cache.set("short", 1, ttl=10)
    await cache.set("default", 2)
    await cache.set("pinned", 3, ttl=10, pinned=True)
    await cache.set("forever", 4, ttl=0)
    clock.advance(9.9)
    assert await cache.get("short") == 1
    clock.advance(0.2)
    assert await cache.get("short") is None
    assert await cache.keys() == ["default", "pinned", "forever"]
    clock.advance(290)
    assert await cache.get("default") is None
    clock.advance(10**9)
    assert await cache.get("pinned") == 3
    assert await cache.get("forever") == 4
    assert await cache.size() == 2


async def test_memory_list_push_refreshes_the_default_ttl() -> None:
    clock = Clock()
    cache = InMemoryServerCache(clock=clock, ttl=60)
    await cache.list_push("l", 1)
    clock.advance(50)
    await cache.list_push("l", 2)
    clock.advance(50)
    assert await cache.list_range("l") == [1, 2]
    clock.advance(11)
    assert await cache.list_length("l") == 0


async def test_memory_lru_eviction_spares_pinned_keys() -> None:
    cache = InMemoryServerCache(clock=Clock(), max_size=3)
    await cache.set("p", "pinned", pinned=True)
    await cache.set("a", 1)
    await cache.set("b", 2)
    await cache.set("c", 3)  # over the bound: "a", the least recently used unpinned key, goes
    assert await cache.keys() == ["p", "b", "c"]
    assert await cache.get("b") == 2  # "b" is now the most recent
    await cache.set("d", 4)
    assert sorted(await cache.keys()) == ["b", "d", "p"]
    for n in range(20):
        await cache.set(f"x{n}", n)
    assert await cache.get("p") == "pinned"
    assert await cache.size() == 3


async def test_memory_counters_without_ttl_never_expire_nor_evict() -> None:
    clock = Clock()
    cache = InMemoryServerCache(clock=clock, max_size=2, ttl=5)
    assert await cache.increment("budget", 7) == 7
    await cache.increment("window", 1, ttl=10)
    for n in range(10):
        await cache.set(f"k{n}", n)
    clock.advance(10**9)
    assert await cache.get("budget") == 7
    assert await cache.increment("budget") == 8


async def test_memory_increment_with_ttl_expires() -> None:
    clock = Clock()
    cache = InMemoryServerCache(clock=clock)
    assert await cache.increment("window", ttl=10) == 1
    clock.advance(10.5)
    assert await cache.increment("window", ttl=10) == 1


async def test_memory_shared_stats_are_the_process_counters() -> None:
    cache = InMemoryServerCache()
    await cache.set("k", 1)
    await cache.get("k")
    assert await cache.shared_stats() == CacheStats(hits=1, misses=0, writes=1, errors=0)
