"""RedisOverrideStore: editor override versions on the Redis server the
replicas share, and the invalidations that keep their caches current.

Keys (every one starts with `key_prefix + "overrides:"`, so it can share
RedisStorage's server and prefix):

    overrides:head:<key>       the current version number
    overrides:versions:<key>   hash: version number -> the version (codec JSON)
    overrides:changed          pub/sub channel: "<writer id> <key>" after each write

A write is one MULTI/EXEC under WATCH of the head: the next version, the new
head, the pruning of versions beyond MAX_VERSIONS and the PUBLISH commit
together or are retried, so two replicas writing at once make two versions,
never one lost. `watch` follows the channel on a connection of its own; when
that connection fails or reconnects, every cached entry is dropped once it is
back (what was published meanwhile is lost to it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import Any

from redis.asyncio.client import Pipeline, PubSub
from redis.exceptions import RedisError

from agentd.backends.redis_client import RedisBackend, begin, text
from agentd.backends.redis_storage import DEFAULT_KEY_PREFIX
from agentd.backends.stored_overrides import decode_version, encode_version
from agentd.runtime.cache import CacheError
from agentd.runtime.overrides import MAX_VERSIONS, OverrideStore, OverrideVersion
from agentd.runtime.overrides.store import OnChange, Step, kept_range, next_version
from agentd.runtime.storage import StorageError

__all__ = ["RedisOverrideStore"]

log = logging.getLogger("agentd.overrides")


class RedisOverrideStore(RedisBackend, OverrideStore):
    default_key_prefix = DEFAULT_KEY_PREFIX
    error = StorageError
    label = "redis overrides store"
    undecodable = (CacheError,)
    shared = True

    def __init__(self, url: str | None = None, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        #: Tells this process's own writes apart on the channel.
        self.writer_id = uuid.uuid4().hex[:12]
        self._pubsub: PubSub | None = None
        self._listener: asyncio.Task[None] | None = None
        self._on_change: OnChange | None = None

    def _key(self, *parts: str) -> str:
        return self.key("overrides", *parts)

    async def _head_number(self, key: str) -> int:
        raw = await self.client.get(self._key("head", key))
        return int(text(raw)) if raw is not None else 0

    async def head(self, key: str) -> OverrideVersion | None:
        with self.failures("head"):
            number = await self._head_number(key)
            if not number:
                return None
            body = await self.client.hget(self._key("versions", key), str(number))
        return decode_version(body) if body is not None else None

    async def version(self, key: str, version: int) -> OverrideVersion | None:
        with self.failures("version"):
            body = await self.client.hget(self._key("versions", key), str(version))
        return decode_version(body) if body is not None else None

    async def versions(self, key: str, below: int | None, limit: int) -> list[OverrideVersion]:
        with self.failures("versions"):
            wanted = kept_range(await self._head_number(key), below, limit)
            if not wanted:
                return []
            bodies = await self.client.hmget(self._key("versions", key), [str(n) for n in wanted])
        return [decode_version(b) for b in bodies if b is not None]

    async def append(self, key: str, step: Step, updated_by: str) -> OverrideVersion:
        head_key, versions_key = self._key("head", key), self._key("versions", key)

        async def write(pipe: Pipeline) -> OverrideVersion:
            await pipe.watch(head_key)
            raw = await pipe.get(head_key)
            number = int(text(raw)) if raw is not None else 0
            body = await pipe.hget(versions_key, str(number)) if number else None
            made = next_version(key, decode_version(body) if body is not None else None, step, updated_by)
            begin(pipe)
            pipe.set(head_key, str(made.version))
            pipe.hset(versions_key, str(made.version), encode_version(made))
            if made.version > MAX_VERSIONS:  # every write prunes one: at most MAX_VERSIONS are kept
                pipe.hdel(versions_key, str(made.version - MAX_VERSIONS))
            pipe.publish(self._key("changed"), f"{self.writer_id} {key}")
            await pipe.execute()
            return made

        with self.failures("append"):
            return await self.optimistic(f"append to {key}", write)

    # ------------------------------------------------------------ invalidations

    async def watch(self, on_change: OnChange) -> None:
        if self._listener is not None:
            raise RuntimeError("RedisOverrideStore.watch: already watching")
        try:
            self._pubsub = await self._subscribe()
        except (RedisError, OSError) as exc:  # Redis down at start: the listener keeps trying
            log.warning("overrides invalidations: cannot subscribe yet: %s", exc)
        self._on_change = on_change
        self._listener = asyncio.create_task(self._listen(on_change), name="overrides invalidations")

    async def _subscribe(self) -> PubSub:
        pubsub = self.client.pubsub()
        try:
            await pubsub.subscribe(self._key("changed"))
        except BaseException:
            with contextlib.suppress(RedisError, OSError):
                await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
            raise
        # redis-py reconnects (and resubscribes) by itself inside get_message: hear of it.
        assert pubsub.connection is not None
        pubsub.connection.register_connect_callback(self._reconnected)
        return pubsub

    def _reconnected(self, connection: Any) -> None:
        """After a reconnection: what was published meanwhile is lost, so forget everything."""
        if self._on_change is not None:
            self._on_change(None)

    async def _listen(self, on_change: OnChange) -> None:
        while True:
            if self._pubsub is None:
                await self._resubscribe()
                on_change(None)  # what was published while it was not listening is lost: forget everything
            assert self._pubsub is not None
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except (RedisError, OSError) as exc:
                log.warning("overrides invalidations: the channel failed, resubscribing: %s", exc)
                with contextlib.suppress(RedisError, OSError):
                    await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
                self._pubsub = None
                continue
            if message is None:
                continue
            writer, _, key = text(message["data"]).partition(" ")
            if writer != self.writer_id:
                on_change(key)

    async def _resubscribe(self) -> None:
        while True:
            await asyncio.sleep(0.2)
            try:
                self._pubsub = await self._subscribe()
                return
            except (RedisError, OSError):
                continue

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        if self._pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
            self._pubsub = None
        with contextlib.suppress(RedisError, OSError):
            await super().close()

    async def clear(self) -> None:
        """Deletes every key of this store (tests)."""
        with self.failures("clear"):
            keys = [k async for k in self.client.scan_iter(match=self._key("*"), count=1000)]
            if keys:
                await self.client.unlink(*keys)
