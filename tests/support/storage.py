"""For the storage tests: key prefixes and keys on Redis, and a storage whose
thread reads are slow."""

from __future__ import annotations

import asyncio
import uuid

from agentd.backends.redis_storage import RedisStorage
from agentd.runtime.storage import Storage, Thread


def unique_prefix() -> str:
    return f"agentd-test-store:{uuid.uuid4().hex[:12]}:"


async def redis_keys(storage: RedisStorage) -> list[str]:
    return sorted([k.decode() async for k in storage.client.scan_iter(match=storage.key_prefix + "*")])


async def drop_redis_keys(storage: RedisStorage) -> None:
    keys = await redis_keys(storage)
    if keys:
        await storage.client.unlink(*keys)


def slow_reads(storage: Storage, delay: float = 0.005) -> None:
    """Thread reads take a while, as over a network: a check-then-write that reads
    through get_thread lets every concurrent sender read before anyone writes."""
    read = storage.get_thread

    async def get_thread(thread_id: str) -> Thread | None:
        thread = await read(thread_id)
        await asyncio.sleep(delay)  # the answer travels back
        return thread

    storage.get_thread = get_thread  # type: ignore[method-assign]
