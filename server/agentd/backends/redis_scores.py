"""RedisScoreStore: the live scorers' scores on a Redis server, shared by replicas.

Beside RedisStorage (same server and `key_prefix`; every key here starts with
`key_prefix + "scores:"`):

    scores:records                         hash: score id -> the score (JSON)
    scores:order:<tenant>                  sorted set, all scores 0, member `<created_at>:<id>`
    scores:order:<tenant>:run:<run id>     the same, of one run
    scores:order:<tenant>:thread:<thread>  of one thread
    scores:order:<tenant>:agent:<agent>    of one agent

A member's time is RedisStorage's `time_key` (zero-padded microseconds), so
ZREVRANGEBYLEX lists scores newest first, as every score store orders them. A
listing reads the narrowest index its filters allow (run, thread, agent, else
the tenant's), from the page cursor or `end_time` down, and stops at
`start_time`; the other filters are applied to the records read in batches of
BATCH. An add is one MULTI/EXEC (the record and its members commit together).

Errors: an unreachable server, a timeout or a malformed entry raise StorageError.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime
from typing import Any

from agentd.backends.redis_client import RedisBackend, text
from agentd.backends.redis_storage import DEFAULT_KEY_PREFIX, time_key
from agentd.runtime.scoring.record import Score, ScorePage, ScoreQuery, matches, page_of
from agentd.runtime.scoring.store import ScoreStore
from agentd.runtime.storage import StorageError

__all__ = ["RedisScoreStore"]

#: Members read per round trip while a listing filters.
BATCH = 200


def _member(when: datetime, id: str) -> str:
    return f"{time_key(when)}:{id}"


def _encode(score: Score) -> str:
    data: dict[str, Any] = asdict(score)
    data["created_at"] = score.created_at.isoformat()
    return json.dumps(data, ensure_ascii=False)


def _decode(raw: Any) -> Score:
    data = json.loads(raw)
    data["created_at"] = datetime.fromisoformat(data["created_at"])
    return Score(**data)


class RedisScoreStore(RedisBackend, ScoreStore):
    backend = "redis"
    shared = True
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = StorageError
    label = "redis score store"
    malformed = (KeyError, TypeError, ValueError)

    def _key(self, *parts: str) -> str:
        return self.key("scores", *parts)

    def _indexes(self, score: Score) -> list[str]:
        keys = [self._key("order", score.tenant), self._key("order", score.tenant, "run", score.run_id)]
        keys.append(self._key("order", score.tenant, "agent", score.agent_id))
        if score.thread_id:
            keys.append(self._key("order", score.tenant, "thread", score.thread_id))
        return keys

    def _index(self, query: ScoreQuery) -> str:
        for field in ("run", "thread", "agent"):
            value = getattr(query, f"{field}_id")
            if value:
                return self._key("order", query.tenant, field, value)
        return self._key("order", query.tenant)

    async def add(self, score: Score) -> None:
        member = {_member(score.created_at, score.id): 0}
        with self.failures("add"):
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self._key("records"), score.id, _encode(score))
                for key in self._indexes(score):
                    pipe.zadd(key, member)
                await pipe.execute()

    async def list(self, query: ScoreQuery) -> ScorePage:
        key = self._index(query)
        bounds = [f"({_member(*query.after)}"] if query.after is not None else []
        if query.end is not None:
            bounds.append(f"({time_key(query.end)}")  # below every member of that microsecond
        upper = min(bounds, key=lambda b: b[1:]) if bounds else "+"
        lower = f"[{time_key(query.start)}" if query.start is not None else "-"
        found: list[Score] = []
        with self.failures("list"):
            while len(found) <= query.limit:
                members = [text(m) for m in await self.client.zrevrangebylex(key, upper, lower, start=0, num=BATCH)]
                if not members:
                    break
                raws = await self.client.hmget(self._key("records"), [m.split(":", 1)[1] for m in members])
                for raw in raws:
                    if raw is not None and matches(query, score := _decode(raw)):
                        found.append(score)
                upper = f"({members[-1]}"
                if len(members) < BATCH:
                    break
        return page_of(query, found[: query.limit + 1])
