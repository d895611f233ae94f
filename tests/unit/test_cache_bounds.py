"""The memory cache's bound in bytes, beside its bound in entries."""

from __future__ import annotations

import pytest

from agentd.runtime.cache import CacheEntryTooLarge, InMemoryServerCache


async def test_big_values_evict_the_least_recently_used_to_stay_under_max_bytes() -> None:
    cache = InMemoryServerCache(max_size=1000, max_bytes=1_000_000)
    for i in range(100):  # 100 values of ~100 KB: ten times what it may hold
        await cache.set(f"k{i}", "v" * 100_000)
        assert cache.bytes <= 1_000_000
    kept = await cache.keys()
    assert 0 < len(kept) < 10 and "k99" in kept and "k0" not in kept
    await cache.clear()
    assert cache.bytes == 0


async def test_pinned_entries_stay_and_a_value_too_big_alone_is_refused() -> None:
    cache = InMemoryServerCache(max_bytes=100_000)
    await cache.set("pinned", "p" * 40_000, pinned=True)
    for i in range(10):
        await cache.set(f"k{i}", "v" * 30_000)
    assert await cache.get("pinned") is not None and cache.bytes <= 100_000
    with pytest.raises(CacheEntryTooLarge):
        await cache.set("huge", "h" * 200_000)
    assert await cache.get("huge") is None


async def test_a_list_cannot_outgrow_the_cache_and_deletes_give_bytes_back() -> None:
    cache = InMemoryServerCache(max_bytes=50_000)
    for _ in range(4):
        await cache.list_push("log", "x" * 10_000)
    with pytest.raises(CacheEntryTooLarge):
        await cache.list_push("log", "x" * 10_000)
    assert await cache.list_length("log") == 4
    assert await cache.delete("log") and cache.bytes == 0
    await cache.set("a", "1")
    await cache.set("a", "22")  # replacing counts the new value only
    assert cache.bytes < 200
