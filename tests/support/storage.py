"""For the storage tests: threads and messages to store, key prefixes and keys
on Redis, and a storage whose thread reads are slow."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime
from typing import Any

from agentd.backends.redis_storage import RedisStorage
from agentd.runtime.messages import Message, TextPart
from agentd.runtime.signals import create_signal, to_db_message
from agentd.runtime.storage import Storage, Thread
from support.clocks import T0


def thread(thread_id: str = "t-1", resource_id: str = "r-1", **kwargs: Any) -> Thread:
    return Thread(thread_id, resource_id, **kwargs)


def text(thread_id: str, message_id: str, body: str, at: datetime = T0, role: Any = "user") -> Message:
    return Message(role=role, parts=[TextPart(body)], id=message_id, thread_id=thread_id, created_at=at)


def reminder(thread_id: str, message_id: str, at: datetime = T0) -> Message:
    """A hidden row: a reactive signal (a system reminder)."""
    signal = create_signal("reactive", f"reminder {message_id}", id=message_id, created_at=at)
    return to_db_message(signal, thread_id=thread_id, resource_id="r-1")


def ids(messages: list[Message]) -> list[str]:
    return [m.id for m in messages]


def bump(metadata: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A counter in the metadata: a lost update shows as a missing increment."""
    count = int(metadata.get("count", 0)) + 1
    return {**metadata, "count": count}, count


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
