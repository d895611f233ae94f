"""Thread leases: one suite run against LocalCoordination and RedisCoordination on a real redis-server.

Then what only Redis can show: the stored key and its PTTL, a client that
decodes responses, an unreachable server, and the configuration that puts
coordination on Redis. LocalCoordination alone (its injected clock, a
LeaseKeeper over a failing backend) is tests/unit/test_local_coordination.py.

Timing: TTLs are a few hundred milliseconds and no test waits much longer than
a few times the TTL it configures.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from agentd.backends.redis_coordination import DEFAULT_KEY_PREFIX, RedisCoordination
from agentd.runtime.coordination import (
    Coordination,
    CoordinationError,
    LeaseKeeper,
    LeaseUnavailable,
    LocalCoordination,
)
from redis_server import RedisServer, free_port
from support.leases import wait_lost


def unique_prefix() -> str:
    return f"agentd-test:{uuid.uuid4().hex[:12]}:lease:"


def thread() -> str:
    return f"thread-{uuid.uuid4().hex[:8]}"


async def drop(coordination: Coordination, thread_id: str) -> None:
    """Deletes a lease behind its holder's back (an operator, a flushed Redis)."""
    if isinstance(coordination, RedisCoordination):
        await coordination.client.delete(coordination.key(thread_id))
    else:
        assert isinstance(coordination, LocalCoordination)
        coordination._leases.pop(thread_id, None)


@pytest.fixture
async def redis_coordination(redis_server: RedisServer) -> AsyncIterator[RedisCoordination]:
    coordination = RedisCoordination(redis_server.url, key_prefix=unique_prefix())
    try:
        yield coordination
    finally:
        try:
            keys = [k async for k in coordination.client.scan_iter(match=coordination.key_prefix + "*")]
            if keys:
                await coordination.client.delete(*keys)
        finally:
            await coordination.close()


@pytest.fixture(params=["local", "redis"])
def coordination(request: pytest.FixtureRequest) -> Coordination:
    if request.param == "local":
        return LocalCoordination()
    redis_coordination: RedisCoordination = request.getfixturevalue("redis_coordination")
    return redis_coordination


# ============================================================ the shared suite


async def test_exactly_one_of_many_concurrent_acquirers_wins(coordination: Coordination) -> None:
    owners = [f"replica-{i}" for i in range(10)]
    for _ in range(50):
        thread_id = thread()
        results = await asyncio.gather(*(coordination.acquire(thread_id, o, 5_000) for o in owners))
        assert results.count(True) == 1
        winner = owners[results.index(True)]
        assert await coordination.owner(thread_id) == winner
        # Late comers lose too; the winner asking again is told it holds it.
        assert not await coordination.acquire(thread_id, "late", 5_000)
        assert await coordination.acquire(thread_id, winner, 5_000)
        assert await coordination.owner(thread_id) == winner


async def test_a_free_lease(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.owner(thread_id) is None
    assert not await coordination.renew(thread_id, "a", 1_000)
    assert not await coordination.release(thread_id, "a")
    assert not await coordination.transfer(thread_id, "a", "b", 1_000)
    assert await coordination.owner(thread_id) is None


async def test_leases_are_per_thread(coordination: Coordination) -> None:
    first, second = thread(), thread()
    assert await coordination.acquire(first, "a", 5_000)
    assert await coordination.acquire(second, "b", 5_000)
    assert await coordination.owner(first) == "a"
    assert await coordination.owner(second) == "b"
    assert await coordination.release(first, "a")
    assert await coordination.owner(second) == "b"


async def test_a_non_owner_can_change_nothing(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "a", 300)
    assert not await coordination.renew(thread_id, "b", 10_000)
    assert not await coordination.release(thread_id, "b")
    assert not await coordination.transfer(thread_id, "b", "c", 10_000)
    assert not await coordination.transfer(thread_id, "b", "b", 10_000)
    assert await coordination.owner(thread_id) == "a"
    # Nor did any of that move the expiry: the lease ends on a's 300 ms.
    await asyncio.sleep(0.45)
    assert await coordination.owner(thread_id) is None


async def test_a_lease_expires_after_its_ttl(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "a", 200)
    assert not await coordination.acquire(thread_id, "b", 200)
    await asyncio.sleep(0.3)
    assert await coordination.owner(thread_id) is None
    assert not await coordination.renew(thread_id, "a", 200)  # too late: gone
    assert await coordination.acquire(thread_id, "b", 200)
    assert not await coordination.renew(thread_id, "a", 200)
    assert not await coordination.release(thread_id, "a")
    assert await coordination.owner(thread_id) == "b"


async def test_renew_restarts_the_ttl(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "a", 300)
    await asyncio.sleep(0.2)
    assert await coordination.renew(thread_id, "a", 300)
    await asyncio.sleep(0.2)  # 400 ms since acquire: alive only thanks to the renewal
    assert await coordination.owner(thread_id) == "a"
    await asyncio.sleep(0.25)
    assert await coordination.owner(thread_id) is None


async def test_release_frees_the_thread(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "a", 5_000)
    assert await coordination.release(thread_id, "a")
    assert await coordination.owner(thread_id) is None
    assert not await coordination.release(thread_id, "a")
    assert await coordination.acquire(thread_id, "b", 5_000)


async def test_transfer_hands_ownership_over_with_a_fresh_ttl(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "run-1", 300)
    await asyncio.sleep(0.2)
    assert await coordination.transfer(thread_id, "run-1", "run-2", 500)
    assert await coordination.owner(thread_id) == "run-2"
    # The old owner has nothing left.
    assert not await coordination.renew(thread_id, "run-1", 10_000)
    assert not await coordination.release(thread_id, "run-1")
    assert not await coordination.transfer(thread_id, "run-1", "run-3", 10_000)
    await asyncio.sleep(0.2)  # 400 ms: past run-1's ttl, within run-2's fresh one
    assert await coordination.owner(thread_id) == "run-2"
    await asyncio.sleep(0.45)  # 850 ms: past run-2's 500 ms from the transfer
    assert await coordination.owner(thread_id) is None


async def test_invalid_arguments(coordination: Coordination) -> None:
    with pytest.raises(ValueError, match="ttl_ms"):
        await coordination.acquire(thread(), "a", 0)
    with pytest.raises(ValueError, match="ttl_ms"):
        await coordination.renew(thread(), "a", -5)
    with pytest.raises(ValueError, match="ttl_ms"):
        await coordination.acquire(thread(), "a", 1.5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="owner"):
        await coordination.acquire(thread(), "", 1_000)
    with pytest.raises(ValueError, match="owner"):
        await coordination.transfer(thread(), "a", "", 1_000)
    with pytest.raises(ValueError, match="thread_id"):
        await coordination.owner("")


# ------------------------------------------------------------ LeaseKeeper


async def test_keeper_keeps_a_lease_well_past_its_ttl(coordination: Coordination) -> None:
    thread_id = thread()
    async with LeaseKeeper(coordination, thread_id, "a", ttl_ms=300) as keeper:
        assert keeper.held
        for _ in range(5):  # a second in all: over three ttls
            await asyncio.sleep(0.2)
            assert await coordination.owner(thread_id) == "a"
            assert not await coordination.acquire(thread_id, "b", 300)
        assert not keeper.lost.is_set()
        assert keeper.renewals >= 5
    assert not keeper.held
    assert await coordination.owner(thread_id) is None  # released on exit
    assert await coordination.acquire(thread_id, "b", 300)


async def test_keeper_releases_when_the_block_raises(coordination: Coordination) -> None:
    thread_id = thread()
    with pytest.raises(RuntimeError, match="boom"):
        async with LeaseKeeper(coordination, thread_id, "a", ttl_ms=5_000):
            raise RuntimeError("boom")
    assert await coordination.owner(thread_id) is None


async def test_keeper_is_lost_when_another_owner_takes_an_expired_lease(coordination: Coordination) -> None:
    thread_id = thread()
    # Renewing only every 500 ms lets the 200 ms lease really expire in between.
    async with LeaseKeeper(coordination, thread_id, "a", ttl_ms=200, renew_interval_ms=500) as keeper:
        await asyncio.sleep(0.3)
        assert await coordination.owner(thread_id) is None
        assert await coordination.acquire(thread_id, "b", 5_000)
        await wait_lost(keeper, within=0.6)
        assert not keeper.held
    assert await coordination.owner(thread_id) == "b"  # the exit left b's lease alone


async def test_keeper_is_lost_when_the_key_is_deleted(coordination: Coordination) -> None:
    thread_id = thread()
    async with LeaseKeeper(coordination, thread_id, "a", ttl_ms=300) as keeper:
        await asyncio.sleep(0.15)
        await drop(coordination, thread_id)
        await wait_lost(keeper, within=0.3)  # the next renewal, 100 ms later, is refused
    assert await coordination.owner(thread_id) is None


async def test_keeper_cannot_take_a_held_lease(coordination: Coordination) -> None:
    thread_id = thread()
    assert await coordination.acquire(thread_id, "a", 5_000)
    keeper = LeaseKeeper(coordination, thread_id, "b", ttl_ms=5_000)
    with pytest.raises(LeaseUnavailable) as caught:
        async with keeper:
            pytest.fail("entered a lease held by another owner")
    assert caught.value.holder == "a"
    assert not keeper.held
    assert await coordination.owner(thread_id) == "a"


async def test_keeper_transfers_to_the_next_run_which_adopts_it(coordination: Coordination) -> None:
    thread_id = thread()
    async with LeaseKeeper(coordination, thread_id, "run-1", ttl_ms=300) as first:
        assert await first.transfer("run-2")
        assert not first.held
        assert not await first.transfer("run-3")  # once only
        await asyncio.sleep(0.15)  # first no longer renews for run-1 (nor touches run-2's lease)
    assert not first.lost.is_set()
    assert await coordination.owner(thread_id) == "run-2"  # not released by run-1's exit
    async with LeaseKeeper(coordination, thread_id, "run-2", ttl_ms=300, adopt=True) as second:
        await asyncio.sleep(0.5)  # kept past the transfer's 300 ms
        assert await coordination.owner(thread_id) == "run-2"
        assert not second.lost.is_set()
    assert await coordination.owner(thread_id) is None


async def test_keeper_transfer_of_a_lost_lease_fails(coordination: Coordination) -> None:
    thread_id = thread()
    async with LeaseKeeper(coordination, thread_id, "run-1", ttl_ms=5_000) as keeper:
        await drop(coordination, thread_id)
        assert not await keeper.transfer("run-2")
        assert keeper.lost.is_set()
    assert await coordination.owner(thread_id) is None


async def test_keeper_cannot_adopt_a_lease_it_was_not_given(coordination: Coordination) -> None:
    thread_id = thread()
    with pytest.raises(LeaseUnavailable):
        async with LeaseKeeper(coordination, thread_id, "run-2", adopt=True):
            pass
    assert await coordination.acquire(thread_id, "run-1", 5_000)
    with pytest.raises(LeaseUnavailable):
        async with LeaseKeeper(coordination, thread_id, "run-2", adopt=True):
            pass
    assert await coordination.owner(thread_id) == "run-1"


# ============================================================ Redis


async def test_redis_stores_the_owner_under_the_prefix_with_a_ms_ttl(redis_coordination: RedisCoordination) -> None:
    client = redis_coordination.client
    key = redis_coordination.key("t-1")
    assert key == redis_coordination.key_prefix + "t-1"
    assert await redis_coordination.acquire("t-1", "replica-a:run-1", 1_500)
    assert await client.get(key) == b"replica-a:run-1"
    assert 1_000 < await client.pttl(key) <= 1_500
    assert await redis_coordination.renew("t-1", "replica-a:run-1", 9_000)
    assert 8_000 < await client.pttl(key) <= 9_000
    assert not await redis_coordination.renew("t-1", "other", 60_000)
    assert await client.pttl(key) <= 9_000
    assert await redis_coordination.transfer("t-1", "replica-a:run-1", "replica-b:run-2", 4_000)
    assert await client.get(key) == b"replica-b:run-2"
    assert 3_000 < await client.pttl(key) <= 4_000
    assert await redis_coordination.release("t-1", "replica-b:run-2")
    assert await client.exists(key) == 0
    assert redis_coordination.backend == "redis"
    assert await redis_coordination.ping()


async def test_redis_default_prefix(redis_server: RedisServer) -> None:
    coordination = RedisCoordination(redis_server.url)
    try:
        assert DEFAULT_KEY_PREFIX == "agentd:lease:"
        assert coordination.key("abc") == "agentd:lease:abc"
        assert repr(coordination) == "RedisCoordination(key_prefix='agentd:lease:')"
    finally:
        await coordination.close()


async def test_redis_replicas_share_leases(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    replicas = [RedisCoordination(redis_server.url, key_prefix=prefix) for _ in range(3)]
    try:
        for _ in range(20):
            thread_id = thread()
            results = await asyncio.gather(
                *(r.acquire(thread_id, f"replica-{i}", 5_000) for i, r in enumerate(replicas))
            )
            assert results.count(True) == 1
            winner = f"replica-{results.index(True)}"
            assert {await r.owner(thread_id) for r in replicas} == {winner}
            assert await replicas[(results.index(True) + 1) % 3].release(thread_id, winner)  # the token, not the client
    finally:
        for r in replicas:
            await r.close()


async def test_redis_with_a_decoding_client(redis_server: RedisServer) -> None:
    client = Redis.from_url(redis_server.url, decode_responses=True)
    coordination = RedisCoordination(client=client, key_prefix=unique_prefix())
    try:
        assert await coordination.acquire("t", "a", 5_000)
        assert await coordination.acquire("t", "a", 5_000)
        assert not await coordination.acquire("t", "b", 5_000)
        assert await coordination.owner("t") == "a"
        assert await coordination.transfer("t", "a", "b", 5_000)
        assert await coordination.release("t", "b")
    finally:
        await coordination.close()  # a passed client is not closed
        assert await client.ping()
        await client.aclose()


async def test_redis_unreachable_raises_coordination_error() -> None:
    coordination = RedisCoordination(f"redis://127.0.0.1:{free_port()}/0", socket_timeout=0.5)
    try:
        for call in (
            coordination.acquire("t", "a", 1_000),
            coordination.renew("t", "a", 1_000),
            coordination.release("t", "a"),
            coordination.transfer("t", "a", "b", 1_000),
            coordination.owner("t"),
        ):
            with pytest.raises(CoordinationError, match="redis coordination"):
                await call
    finally:
        await coordination.close()


async def test_redis_keeper_loses_a_lease_when_redis_stops() -> None:
    server = RedisServer.start_new()  # its own server: the session's one stays up
    coordination = RedisCoordination(server.url, socket_timeout=0.2)
    try:
        async with LeaseKeeper(coordination, "t", "a", ttl_ms=400) as keeper:
            server.stop()
            await wait_lost(keeper, within=1.0)
        server.start()  # empty again: nothing persisted, nothing held
        assert await coordination.owner("t") is None
    finally:
        await coordination.close()
        server.close()


def test_redis_needs_exactly_one_of_url_and_client() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        RedisCoordination()
    with pytest.raises(ValueError, match="max_connections"):
        RedisCoordination("redis://127.0.0.1:1/0", max_connections=0)


def test_redis_coordination_with_per_replica_storage_is_refused(tmp_path: Path) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text('[coordination]\nbackend = "redis"\n\n[storage]\nbackend = "sqlite"\npath = "x.db"\n')
    with pytest.raises(config.ConfigError, match="each replica keeps to itself"):
        config.load(path, env={})
    assert not (tmp_path / "x.db").exists()  # refused before the file is created


def test_redis_coordination_takes_the_storage_redis_url(tmp_path: Path, redis_server: RedisServer) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text(
        f'[coordination]\nbackend = "redis"\n\n[storage]\nbackend = "redis"\nredis_url = "{redis_server.url}"\n'
    )
    loaded = config.load(path, env={})
    assert isinstance(loaded.coordination, RedisCoordination)
    assert loaded.coordination_settings.redis_url == redis_server.url


async def test_redis_coordination_puts_storage_and_cache_on_the_same_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    from agentd import config
    from agentd.backends.redis_cache import RedisServerCache
    from agentd.backends.redis_cluster import RedisCluster
    from agentd.backends.redis_storage import RedisStorage

    path = tmp_path / "agentd.toml"
    path.write_text(f'[coordination]\nbackend = "redis"\nredis_url = "{redis_server.url}"\nlease_ttl_ms = 700\n')
    loaded = config.load(path, env={})
    try:
        assert loaded.storage_settings.backend == "redis" and loaded.storage_settings.redis_url == redis_server.url
        assert isinstance(loaded.storage, RedisStorage)
        assert loaded.cache.backend == "redis" and isinstance(loaded.caches["redis"], RedisServerCache)
        assert isinstance(loaded.cluster, RedisCluster)
        assert loaded.coordination_settings.lease_ttl_ms == 700
    finally:
        assert loaded.cluster is not None and loaded.storage is not None
        await loaded.cluster.close()
        await loaded.storage.close()
        for cache in loaded.caches.values():
            await cache.close()


def test_a_cache_chosen_explicitly_stays_with_redis_coordination(tmp_path: Path, redis_server: RedisServer) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text(
        f'[coordination]\nbackend = "redis"\nredis_url = "{redis_server.url}"\n\n[cache]\nbackend = "memory"\n'
    )
    loaded = config.load(path, env={})
    assert loaded.cache.backend == "memory" and "redis" not in loaded.caches
    assert loaded.storage_settings.backend == "redis"


def test_redis_coordination_needs_a_redis_url(tmp_path: Path) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text('[coordination]\nbackend = "redis"\n')
    with pytest.raises(config.ConfigError, match=r"coordination\.redis_url: required"):
        config.load(path, env={})


def test_one_replica_has_no_cluster(tmp_path: Path) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text('[storage]\nbackend = "memory"\n')
    loaded = config.load(path, env={})
    assert loaded.cluster is None and isinstance(loaded.coordination, LocalCoordination)


async def test_owners_answers_for_several_threads_at_once(coordination: Coordination) -> None:
    assert await coordination.owners([]) == {}
    assert await coordination.acquire("t1", "a", 60_000)
    assert await coordination.acquire("t3", "c", 60_000)
    assert await coordination.owners(["t1", "t2", "t3"]) == {"t1": "a", "t2": None, "t3": "c"}
    with pytest.raises(ValueError):
        await coordination.owners(["t1", ""])


def test_coordination_may_be_given_as_a_bare_backend_name(tmp_path: Path, redis_server: RedisServer) -> None:
    from agentd import config

    path = tmp_path / "agentd.toml"
    path.write_text(f'coordination = "redis"\n\n[storage]\nredis_url = "{redis_server.url}"\n')
    loaded = config.load(path, env={})
    assert loaded.coordination_settings.backend == "redis"
    assert loaded.coordination_settings.redis_url == redis_server.url
    assert loaded.storage_settings.backend == "redis"
    path.write_text('coordination = "local"\n\n[storage]\nbackend = "memory"\n')
    assert isinstance(config.load(path, env={}).coordination, LocalCoordination)
    path.write_text('coordination = "zookeeper"\n')
    with pytest.raises(config.ConfigError, match="not local or redis"):
        config.load(path, env={})


async def test_redis_coordination_from_the_environment_puts_storage_and_cache_on_its_redis(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    from agentd import config
    from agentd.backends.redis_storage import RedisStorage

    path = tmp_path / "agentd.toml"
    path.write_text("[cache]\nmax_size = 10\n")
    env = {"AGENTD_COORDINATION__BACKEND": "redis", "AGENTD_COORDINATION__REDIS_URL": redis_server.url}
    loaded = config.load(path, env=env)
    try:
        assert isinstance(loaded.coordination, RedisCoordination) and isinstance(loaded.storage, RedisStorage)
        assert loaded.storage_settings.redis_url == redis_server.url
        assert loaded.cache.backend == "redis" and loaded.cache.max_size == 10
    finally:
        assert loaded.cluster is not None and loaded.storage is not None
        await loaded.cluster.close()
        await loaded.storage.close()
        await loaded.coordination.close()
        for cache in loaded.caches.values():
            await cache.close()
