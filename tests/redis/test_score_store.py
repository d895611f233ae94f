"""Every score store (memory, SQLite, Redis on a real redis-server) keeps the
same order and answers the same queries: newest first by (created_at, id),
filters by tenant, agent, thread, run, scorer and time, keyset pages that
never repeat or skip a score; SQLite's scores survive a reopen and share the
file with the thread storage; two Redis stores (two replicas) see each other's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agentd.backends.redis_scores import RedisScoreStore
from agentd.backends.sqlite_scores import SQLiteScoreStore
from agentd.backends.sqlite_storage import SQLiteStorage
from agentd.runtime import InMemoryScoreStore, Score, ScoreQuery, ScoreStore
from agentd.runtime.storage import Thread
from redis_server import RedisServer
from support.storage import unique_prefix

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def score(n: int, **fields: Any) -> Score:
    values: dict[str, Any] = {
        "id": f"score_{n:03d}",
        "tenant": "default",
        "agent_id": "a",
        "scorer": "relevancy",
        "run_id": f"run_{n // 2}",
        "value": n / 100,
        "created_at": T0 + timedelta(seconds=n // 3),  # three scores per second: ties broken by id
        "thread_id": f"t{n % 2}",
        "resource_id": "u1",
        "reason": f"reason {n}",
        "label": "pass" if n % 2 else "",
        "source": "judge",
    }
    return Score(**{**values, **fields})


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def scores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ScoreStore]:
    store: ScoreStore
    if request.param == "memory":
        store = InMemoryScoreStore()
    elif request.param == "sqlite":
        store = SQLiteScoreStore(tmp_path / "agentd.db")
    else:
        server: RedisServer = request.getfixturevalue("redis_server")
        store = RedisScoreStore(server.url, key_prefix=unique_prefix())
    try:
        yield store
    finally:
        if isinstance(store, RedisScoreStore):
            keys = [k async for k in store.client.scan_iter(match=store.key_prefix + "*")]
            if keys:
                await store.client.unlink(*keys)
        await store.close()


async def listed(store: ScoreStore, query: ScoreQuery) -> list[Score]:
    out: list[Score] = []
    while True:
        page = await store.list(query)
        out.extend(page.scores)
        if page.next_cursor is None:
            return out
        query = ScoreQuery(**{**{f: getattr(query, f) for f in query.__slots__}, "after": page.next_cursor})


async def test_every_store_orders_filters_and_pages_alike(scores: ScoreStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("agentd.backends.redis_scores.BATCH", 3)  # Redis reads its index in several batches
    added = [score(n) for n in (5, 0, 9, 3, 1, 8, 2, 7, 4, 6)]
    for s in added:
        await scores.add(s)
    await scores.add(score(10, tenant="acme"))
    newest_first = sorted((s for s in added), key=lambda s: (s.created_at, s.id), reverse=True)

    for limit in (1, 3, 4, 50):
        assert await listed(scores, ScoreQuery("default", limit=limit)) == newest_first
    assert [s.id for s in await listed(scores, ScoreQuery("acme"))] == ["score_010"]
    assert await listed(scores, ScoreQuery("nobody")) == []
    assert {s.id for s in await listed(scores, ScoreQuery("default", thread_id="t1", limit=2))} == {
        f"score_{n:03d}" for n in (1, 3, 5, 7, 9)
    }
    assert [s.id for s in await listed(scores, ScoreQuery("default", run_id="run_2"))] == ["score_005", "score_004"]
    assert await listed(scores, ScoreQuery("default", agent_id="b")) == []
    assert await listed(scores, ScoreQuery("default", scorer="toxicity")) == []
    window = await listed(scores, ScoreQuery("default", start=T0 + timedelta(seconds=1), end=T0 + timedelta(seconds=3)))
    assert [s.id for s in window] == ["score_008", "score_007", "score_006", "score_005", "score_004", "score_003"]
    assert (await scores.list(ScoreQuery("default", run_id="run_4"))).scores[0] == score(9)  # every field round-trips


async def test_sqlite_scores_survive_a_reopen_beside_the_thread_storage(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    first = SQLiteScoreStore(path)
    await first.add(score(1))
    await first.close()
    threads = SQLiteStorage(path)
    again = SQLiteScoreStore(path)
    try:
        await threads.create_thread(Thread(id="t1", resource_id="u1"))
        assert (await again.list(ScoreQuery("default"))).scores == [score(1)]
        assert await threads.get_thread("t1") is not None
    finally:
        await again.close()
        await threads.close()


async def test_two_redis_stores_on_one_server_share_their_scores(redis_server: RedisServer) -> None:
    prefix = unique_prefix()
    one, two = (
        RedisScoreStore(redis_server.url, key_prefix=prefix),
        RedisScoreStore(redis_server.url, key_prefix=prefix),
    )
    try:
        await one.add(score(1))
        await two.add(score(2))
        assert [s.id for s in (await one.list(ScoreQuery("default"))).scores] == ["score_002", "score_001"]
        assert RedisScoreStore.shared and not SQLiteScoreStore.shared
    finally:
        keys = [k async for k in one.client.scan_iter(match=prefix + "*")]
        await one.client.unlink(*keys)
        await one.close()
        await two.close()
