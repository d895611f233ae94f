"""One cache suite run against both backends: in memory (fake clock) and a real redis-server.

Then what only Redis can show: the stored TTLs, one real expiry, values through
the codec, and a server that stops and comes back. In-memory expiry and LRU
eviction through the injected clock are tests/unit/test_in_memory_cache.py.
"""

from __future__ import annotations

import asyncio
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import pytest
from redis.asyncio import Redis

from agentd import config
from agentd.backends.redis_cache import RedisServerCache, expire_seconds, match_pattern
from agentd.runtime.cache import CacheError, CacheStats, InMemoryServerCache, ServerCache
from agentd.runtime.messages import FilePart, Message
from redis_server import RedisServer, running_redis_server
from support.clocks import Clock
from support.polling import until
from support.samples import BLOB, sample_message, sample_response


def unique_prefix() -> str:
    return f"agentd-test:{uuid.uuid4().hex[:12]}:"


@pytest.fixture
async def redis_cache(redis_server: RedisServer) -> AsyncIterator[RedisServerCache]:
    cache = RedisServerCache(redis_server.url, key_prefix=unique_prefix())
    try:
        yield cache
    finally:
        try:
            await cache.clear()
        finally:
            await cache.close()


@pytest.fixture(params=["memory", "redis"])
def cache(request: pytest.FixtureRequest) -> ServerCache:
    if request.param == "memory":
        return InMemoryServerCache(clock=Clock())
    redis_cache: RedisServerCache = request.getfixturevalue("redis_cache")
    return redis_cache


async def pttl(cache: RedisServerCache, key: str) -> int:
    return int(await cache.client.pttl(cache.key_prefix + key))


# ============================================================ the shared suite


async def test_get_set_overwrite_delete(cache: ServerCache) -> None:
    assert await cache.get("a") is None
    await cache.set("a", 1)
    assert await cache.get("a") == 1
    await cache.set("a", {"x": [1, 2], "y": None})
    assert await cache.get("a") == {"x": [1, 2], "y": None}
    assert await cache.delete("a") is True
    assert await cache.delete("a") is False
    assert await cache.delete("never-written") is False
    assert await cache.get("a") is None


@pytest.mark.parametrize(
    "value",
    ["", "héllo", 0, 2.5, False, [1, [2]], {"k": {"n": 1}}, b"\x00\xff", (1, "a"), ["x", (b"y",)]],
    ids=repr,
)
async def test_values_read_back_equal(cache: ServerCache, value: Any) -> None:
    await cache.set("v", value)
    back = await cache.get("v")
    assert back == value
    assert type(back) is type(value)


async def test_pinned_and_zero_ttl_writes_are_readable(cache: ServerCache) -> None:
    await cache.set("pinned", "p", pinned=True)
    await cache.set("forever", "f", ttl=0)
    await cache.set("short", "s", ttl=30)
    assert [await cache.get(k) for k in ("pinned", "forever", "short")] == ["p", "f", "s"]


async def test_clear_by_prefix_leaves_other_prefixes(cache: ServerCache) -> None:
    for key in ("a:1", "a:2", "ab:1", "a*:1", "b:1", "[a]:1"):
        await cache.set(key, key)
    assert await cache.clear("a:") == 2
    assert sorted(await cache.keys()) == sorted(["ab:1", "a*:1", "b:1", "[a]:1"])
    # Prefixes are literal: glob characters match only themselves.
    assert await cache.clear("a*") == 1
    assert await cache.clear("[a]") == 1
    assert await cache.clear("zzz") == 0
    assert sorted(await cache.keys()) == ["ab:1", "b:1"]
    assert await cache.clear() == 2
    assert await cache.size() == 0
    assert await cache.get("b:1") is None


async def test_keys_and_size(cache: ServerCache) -> None:
    assert await cache.keys() == []
    assert await cache.size() == 0
    for key in ("user:1", "user:2", "user:3", "other", "users"):
        await cache.set(key, 0)
    await cache.list_push("user:list", "x")
    await cache.increment("user:count")
    assert sorted(await cache.keys("user:")) == ["user:1", "user:2", "user:3", "user:count", "user:list"]
    assert sorted(await cache.keys("user")) == ["user:1", "user:2", "user:3", "user:count", "user:list", "users"]
    assert await cache.keys("nobody") == []
    assert await cache.size() == 7


async def test_lists(cache: ServerCache) -> None:
    assert await cache.list_length("l") == 0
    assert await cache.list_range("l") == []
    assert await cache.list_range("l", -5, 5) == []
    items = ["a", {"b": [1]}, b"\x00c", ("d",), 5]
    for n, item in enumerate(items, 1):
        assert await cache.list_push("l", item) == n
    assert await cache.list_length("l") == 5
    assert await cache.list_range("l") == items
    assert await cache.list_range("l", 0, -1) == items
    assert await cache.list_range("l", 1, 1) == [{"b": [1]}]  # inclusive end
    assert await cache.list_range("l", 1, 2) == items[1:3]
    assert await cache.list_range("l", -2, -1) == items[-2:]
    assert await cache.list_range("l", -2) == items[-2:]
    assert await cache.list_range("l", -100, 0) == ["a"]
    assert await cache.list_range("l", 0, 100) == items
    assert await cache.list_range("l", 3, 1) == []
    assert await cache.list_range("l", 5, 10) == []
    assert await cache.list_range("l", -1, -2) == []
    assert type((await cache.list_range("l", 2, 2))[0]) is bytes
    assert type((await cache.list_range("l", 3, 3))[0]) is tuple


async def test_list_operations_on_a_non_list_raise_cache_error(cache: ServerCache) -> None:
    await cache.set("s", "a string")
    with pytest.raises(CacheError):
        await cache.list_length("s")
    with pytest.raises(CacheError):
        await cache.list_range("s")
    with pytest.raises(CacheError):
        await cache.list_push("s", 1)
    assert await cache.get("s") == "a string"


async def test_increment(cache: ServerCache) -> None:
    assert await cache.increment("n") == 1
    assert await cache.increment("n", 5) == 6
    assert await cache.increment("n", by=-2) == 4
    assert await cache.get("n") == 4
    assert await cache.increment("m", 0) == 0
    await cache.set("s", "not a counter")
    with pytest.raises(CacheError):
        await cache.increment("s")


async def test_increment_is_atomic(cache: ServerCache) -> None:
    results = await asyncio.gather(*(cache.increment("hits") for _ in range(100)))
    assert sorted(results) == list(range(1, 101))
    assert await cache.get("hits") == 100


async def test_stats(cache: ServerCache) -> None:
    assert cache.stats == CacheStats()
    assert await cache.get("k") is None
    assert cache.stats == CacheStats(misses=1)
    await cache.set("k", "v")
    await cache.set("k", "w")
    assert cache.stats == CacheStats(misses=1, writes=2)
    assert await cache.get("k") == "w"
    assert await cache.get("k") == "w"
    assert cache.stats == CacheStats(hits=2, misses=1, writes=2)
    cache.record_error()
    assert cache.stats.errors == 1


# ============================================================ Redis: TTLs as stored


def test_expire_seconds_rounds_up_to_whole_seconds() -> None:
    assert [expire_seconds(t) for t in (0.001, 0.5, 1, 1.2, 1.999, 2, 5, 300.1)] == [1, 1, 1, 2, 2, 2, 5, 301]


def test_match_pattern_escapes_glob_characters() -> None:
    assert match_pattern(b"a*b?c[d]e\\f:") == b"a\\*b\\?c\\[d\\]e\\\\f:*"


async def test_redis_ttls_are_whole_seconds(redis_cache: RedisServerCache) -> None:
    await redis_cache.set("a", 1, ttl=1.2)
    await redis_cache.set("b", 1, ttl=5)
    await redis_cache.set("c", 1, ttl=0.01)
    await redis_cache.set("d", 1)
    await redis_cache.set("pinned", 1, ttl=5, pinned=True)
    await redis_cache.set("zero", 1, ttl=0)
    await redis_cache.set("negative", 1, ttl=-3)
    assert 1000 < await pttl(redis_cache, "a") <= 2000
    assert 4000 < await pttl(redis_cache, "b") <= 5000
    assert 0 < await pttl(redis_cache, "c") <= 1000
    assert 299_000 < await pttl(redis_cache, "d") <= 300_000  # the default ttl
    assert await pttl(redis_cache, "pinned") == -1
    assert await pttl(redis_cache, "zero") == -1
    assert await pttl(redis_cache, "negative") == -1
    # An overwrite replaces the expiry.
    await redis_cache.set("a", 2, pinned=True)
    assert await pttl(redis_cache, "a") == -1


async def test_redis_list_push_sets_the_default_ttl(redis_server: RedisServer) -> None:
    cache = RedisServerCache(redis_server.url, key_prefix=unique_prefix(), ttl=7.5)
    forever = RedisServerCache(redis_server.url, key_prefix=cache.key_prefix, ttl=0)
    try:
        await cache.list_push("l", 1)
        assert 7000 < await pttl(cache, "l") <= 8000
        await forever.list_push("f", 1)
        assert await pttl(forever, "f") == -1
    finally:
        await cache.clear()
        await cache.close()
        await forever.close()


async def test_redis_counters_expire_only_when_given_a_ttl_at_creation(redis_cache: RedisServerCache) -> None:
    await redis_cache.increment("budget", 3)
    assert await pttl(redis_cache, "budget") == -1
    await redis_cache.increment("budget", 3, ttl=60)  # an existing counter keeps its (no) expiry
    assert await pttl(redis_cache, "budget") == -1
    assert await redis_cache.increment("window", ttl=2.5) == 1
    assert 2000 < await pttl(redis_cache, "window") <= 3000
    assert await redis_cache.increment("window", ttl=100) == 2  # a fixed window: not extended
    assert await pttl(redis_cache, "window") <= 3000


async def test_redis_a_key_really_expires(redis_cache: RedisServerCache) -> None:
    await redis_cache.set("brief", "gone soon", ttl=1)
    await redis_cache.set("stays", "here", ttl=60)
    assert await redis_cache.get("brief") == "gone soon"
    await until(lambda: redis_cache.get("brief"), holds=lambda value: value is None, what="the key to expire")
    assert await redis_cache.keys() == ["stays"]


# ============================================================ Redis: values through the codec


async def test_redis_file_part_bytes_round_trip(redis_cache: RedisServerCache) -> None:
    message = Message(role="user", parts=[FilePart("application/octet-stream", data=b"\x00\xff" + BLOB)])
    await redis_cache.set("file", message)
    back = await redis_cache.get("file")
    assert back == message
    assert back.parts[0].data == b"\x00\xff" + BLOB
    await redis_cache.list_push("files", message.parts[0])
    assert await redis_cache.list_range("files") == [message.parts[0]]


async def test_redis_cached_response_with_every_chunk_type_round_trips(redis_cache: RedisServerCache) -> None:
    response = sample_response()
    await redis_cache.set("response", response, ttl=300)
    assert await redis_cache.get("response") == response
    raw = await redis_cache.client.get(redis_cache.key_prefix + "response")
    assert raw.startswith(b'{"$t":"CachedLLMResponse","chunks":[')
    await redis_cache.set("message", sample_message())
    assert await redis_cache.get("message") == sample_message()


async def test_redis_corrupt_values_raise_cache_error_and_count(redis_cache: RedisServerCache) -> None:
    raw = redis_cache.client
    prefix = redis_cache.key_prefix
    await raw.set(prefix + "garbage", b"\x80not json")
    await raw.set(prefix + "evil", b'{"$t":"os.system","v":"true"}')
    await raw.rpush(prefix + "list", b'"fine"', b"{broken")
    for key in ("garbage", "evil"):
        with pytest.raises(CacheError):
            await redis_cache.get(key)
    with pytest.raises(CacheError):
        await redis_cache.list_range("list")
    assert await redis_cache.list_range("list", 0, 0) == ["fine"]
    assert redis_cache.stats.errors == 3
    assert redis_cache.stats.hits == 0


async def test_redis_unencodable_value_raises_cache_error(redis_cache: RedisServerCache) -> None:
    with pytest.raises(CacheError, match="cannot cache"):
        await redis_cache.set("k", object())
    assert redis_cache.stats.errors == 1
    assert redis_cache.stats.writes == 0


# ============================================================ Redis: keys, prefixes, clients


async def test_redis_key_prefix_is_applied_and_stripped(redis_cache: RedisServerCache) -> None:
    await redis_cache.set("k", 1)
    await redis_cache.set("ünï:😀", 2)
    assert await redis_cache.client.exists(redis_cache.key_prefix + "k") == 1
    assert sorted(await redis_cache.keys()) == ["k", "ünï:😀"]
    assert await redis_cache.get("ünï:😀") == 2


async def test_redis_glob_characters_in_the_key_prefix_are_literal(redis_server: RedisServer) -> None:
    base = unique_prefix()
    globbed = RedisServerCache(redis_server.url, key_prefix=base + "[ab]*?\\:")
    plain = RedisServerCache(redis_server.url, key_prefix=base + "a:")
    try:
        await globbed.set("k", 1)
        await plain.set("k", 2)
        await plain.set("kk", 3)
        assert await globbed.size() == 1
        assert await globbed.keys() == ["k"]
        assert await globbed.clear() == 1
        assert await plain.size() == 2
        assert await plain.get("k") == 2
    finally:
        await plain.clear()
        await globbed.close()
        await plain.close()


async def test_redis_size_counts_only_its_prefix(redis_server: RedisServer, redis_cache: RedisServerCache) -> None:
    other = RedisServerCache(redis_server.url, key_prefix=unique_prefix())
    try:
        for n in range(1200):  # more than one SCAN page
            await other.set(f"k{n}", n)
        await redis_cache.set("mine", 1)
        assert await redis_cache.size() == 1
        assert await other.size() == 1200
        assert len(await other.keys("k1")) == 1 + 10 + 100 + 200
        assert await other.clear() == 1200
        assert await redis_cache.size() == 1
    finally:
        await other.clear()
        await other.close()


async def test_redis_with_an_existing_client(redis_server: RedisServer) -> None:
    client = Redis.from_url(redis_server.url)
    try:
        cache = RedisServerCache(client=client, key_prefix=unique_prefix())
        await cache.set("k", b"v")
        assert await cache.get("k") == b"v"
        await cache.clear()
        await cache.close()
        assert await client.ping()  # a passed client is the caller's to close
    finally:
        await client.aclose()
    with pytest.raises(ValueError, match="exactly one"):
        RedisServerCache()
    with pytest.raises(ValueError, match="exactly one"):
        RedisServerCache(redis_server.url, client=client)


async def test_redis_cache_from_config(redis_server: RedisServer) -> None:
    settings = config.CacheSettings(
        redis_url=redis_server.url, key_prefix=unique_prefix(), ttl_seconds=9, socket_timeout=1.5, max_connections=4
    )
    caches = config.build_caches(settings)
    cache = caches["redis"]
    assert isinstance(cache, RedisServerCache) and cache.backend == "redis"
    try:
        pool = cache.client.connection_pool
        assert pool.max_connections == 4
        assert pool.connection_kwargs["socket_timeout"] == 1.5
        assert pool.connection_kwargs["socket_connect_timeout"] == 1.5
        # Four connections serve many concurrent calls: a call waits for a free one.
        results = await asyncio.gather(*(cache.increment("n") for _ in range(50)))
        assert max(results) == 50
        await cache.set("k", 1)
        assert 8000 < await pttl(cache, "k") <= 9000
    finally:
        await cache.clear()
        for each in caches.values():
            await each.close()


# ============================================================ Redis: failures


@pytest.fixture
def own_redis_server() -> Iterator[RedisServer]:
    """A server of this test's own, to stop and start without disturbing the others."""
    yield from running_redis_server()


@pytest.mark.timeout(60)  # far below the socket timeouts: a call that waited one out would not finish
async def test_redis_stopped_mid_test_then_restarted(own_redis_server: RedisServer) -> None:
    # Refused at once: the timeouts are longer than the test may run.
    cache = RedisServerCache(
        own_redis_server.url, key_prefix=unique_prefix(), socket_timeout=600, socket_connect_timeout=600
    )
    try:
        await cache.set("k", "v")
        assert await cache.get("k") == "v"
        own_redis_server.stop()

        calls: list[Callable[[], Awaitable[Any]]] = [
            lambda: cache.get("k"),
            lambda: cache.set("k", "w"),
            lambda: cache.delete("k"),
            lambda: cache.list_push("l", 1),
            lambda: cache.list_range("l"),
            lambda: cache.increment("n"),
            cache.keys,
            cache.size,
            cache.clear,
        ]
        for n, call in enumerate(calls, 1):
            with pytest.raises(CacheError, match="redis cache"):
                await call()
            assert cache.stats.errors == n
        assert cache.stats.hits == 1 and cache.stats.writes == 1 and cache.stats.misses == 0

        own_redis_server.start()  # same port, empty (no persistence)
        assert await cache.get("k") is None
        await cache.set("k", "back")
        assert await cache.get("k") == "back"
        assert await cache.increment("n") == 1
        assert cache.stats.errors == len(calls)
    finally:
        await cache.close()


@pytest.mark.timeout(30)  # the call ends on its own socket timeout, not the test's
async def test_redis_a_server_that_never_answers_times_out() -> None:
    # A socket that accepts connections but never replies: every call must end
    # with CacheError after about one socket timeout.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        port = listener.getsockname()[1]
        cache = RedisServerCache(f"redis://127.0.0.1:{port}/0", socket_timeout=0.3, socket_connect_timeout=0.3)
        try:
            with pytest.raises(CacheError):
                await cache.get("k")
            assert cache.stats.errors == 1
        finally:
            await cache.close()


async def test_redis_stats_are_shared_by_every_process_using_the_cache(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    one, other = (RedisServerCache(redis_server.url, key_prefix=prefix) for _ in range(2))
    try:
        await one.set("k", 1)
        assert await other.get("k") == 1
        assert await other.get("missing") is None
        for cache in (one, other):
            assert await cache.shared_stats() == CacheStats(hits=1, misses=1, writes=1, errors=0)
        assert (one.stats.hits, other.stats.hits) == (0, 1)  # and each process still counts its own
        assert await one.keys() == ["k"] and await one.size() == 1  # the counters are not a cache key
        await one.clear()
        assert (await other.shared_stats()).writes == 1
    finally:
        await one.close()
        await other.close()
