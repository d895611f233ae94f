"""RedisScoreStore: the live scorers' scores on a Redis server, shared by replicas.

Beside RedisStorage (same server and `key_prefix`; every key here starts with
`key_prefix + "scores:"`):

    scores:records               hash: score id -> the score (JSON)
    scores:order:<tenant>        sorted set, all scores 0, member `<created_at>:<id>`

A member's time is RedisStorage's `time_key` (zero-padded microseconds), so
ZREVRANGEBYLEX lists a tenant's scores newest first, as every score store
orders them; a page's cursor member is an exclusive upper bound. Filters are
applied to the records read in batches of BATCH. An add is one MULTI/EXEC
(the record and its member commit together).

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

    async def add(self, score: Score) -> None:
        with self.failures("add"):
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self._key("records"), score.id, _encode(score))
                pipe.zadd(self._key("order", score.tenant), {_member(score.created_at, score.id): 0})
                await pipe.execute()

    async def list(self, query: ScoreQuery) -> ScorePage:
        key = self._key("order", query.tenant)
        upper = "+" if query.after is None else f"({_member(*query.after)}"
        found: list[Score] = []
        with self.failures("list"):
            while len(found) <= query.limit:
                members = [text(m) for m in await self.client.zrevrangebylex(key, upper, "-", start=0, num=BATCH)]
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
