"""RedisCluster: what agentd replicas share on one Redis besides leases.

Keys (default prefix `agentd:cluster:`):

    log:<thread>        a stream: the thread's chunks, entry id "<offset>-0",
                        trimmed to about `log_retention` entries, expiring
                        `log_ttl_ms` after the last append
    log-epoch:<thread>  the log's epoch (new when the log starts over)
    answer:<key>        a routing answer, for retries of the same request (empty
                        while the replica that claimed it works it out)
    running             hash thread -> the marker (JSON) of the run in flight
    runs                hash run id -> thread id
    replica:<id>        the pub/sub channel a replica answers requests on

Offsets are assigned inside the append script: one past the last entry, or
the server clock in microseconds for a new log, so they only ever grow and any
replica may append. A resuming subscriber's point is gone when it is before
the stream's first entry and entries were trimmed (Redis 7's `entries-added`
is then above the stream's length).

Requests between replicas go over pub/sub: PUBLISH reports how many
subscribers got the message, so a request to a replica that is not listening
fails at once (PeerGone) instead of waiting out a timeout.

Following logs uses one dedicated connection per replica, blocked in one
XREAD over every followed log; `interrupt_read` ends the wait with CLIENT
UNBLOCK when a log is added.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from agentd.backends.redis_client import DEFAULT_MAX_CONNECTIONS, DEFAULT_SOCKET_TIMEOUT, RedisBackend, text
from agentd.runtime import codec
from agentd.runtime.chunks import Chunk
from agentd.runtime.cluster import (
    PENDING,
    Cluster,
    ClusterError,
    Handler,
    LogTail,
    PeerGone,
    PeerTimeout,
    RunMarker,
    error_from_wire,
    error_to_wire,
)
from agentd.runtime.errors import AgentdError

__all__ = ["DEFAULT_KEY_PREFIX", "DEFAULT_LOG_TTL_MS", "RedisCluster"]

log = logging.getLogger("agentd.cluster")

DEFAULT_KEY_PREFIX = "agentd:cluster:"
DEFAULT_LOG_TTL_MS = 24 * 3600 * 1000
DEFAULT_LOG_RETENTION = 10_000

# KEYS[1] the log, KEYS[2] its epoch; ARGV[1] max length, ARGV[2] ttl ms,
# ARGV[3] an epoch for a new log, ARGV[4..] the encoded chunks. Returns the first offset.
_APPEND = """
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local nxt
if #top > 0 then
  nxt = tonumber(string.match(top[1][1], '^(%d+)')) + 1
else
  local t = redis.call('TIME')
  nxt = tonumber(t[1]) * 1000000 + tonumber(t[2])
end
local first = nxt
for i = 4, #ARGV do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], string.format('%.0f', nxt) .. '-0', 'c', ARGV[i])
  nxt = nxt + 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'NX')
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return string.format('%.0f', first)
"""

# KEYS[1] the log, KEYS[2] its epoch; ARGV[1] an epoch for a new log, ARGV[2] ttl ms.
# Returns {epoch, last id or '', last body or '', first id or '', 1 when entries were trimmed}.
# (Trimming leaves `max-deleted-entry-id` alone; more entries added than held means some were.)
_TAIL = """
if redis.call('SET', KEYS[2], ARGV[1], 'NX') then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
local epoch = redis.call('GET', KEYS[2])
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top == 0 then
  return {epoch, '', '', '', 0}
end
local first = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local added, length = 0, 0
for i = 1, #info, 2 do
  if info[i] == 'entries-added' then added = info[i + 1] end
  if info[i] == 'length' then length = info[i + 1] end
end
return {epoch, top[1][1], top[1][2][2], first[1][1], added > length and 1 or 0}
"""

# KEYS[1] running, KEYS[2] runs; ARGV[1] thread, ARGV[2] run id.
_UNMARK = """
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw and cjson.decode(raw)['run_id'] == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
end
redis.call('HDEL', KEYS[2], ARGV[2])
return 1
"""


def _offset(entry_id: Any) -> int:
    return int(text(entry_id).partition("-")[0])


class RedisCluster(RedisBackend, Cluster):
    """Chunk logs, run markers and replica requests on the Redis at `url`."""

    default_key_prefix = DEFAULT_KEY_PREFIX
    error = ClusterError
    label = "redis cluster"
    failed = "{label} {what} failed: {exc}"

    def __init__(
        self,
        url: str,
        *,
        key_prefix: str = DEFAULT_KEY_PREFIX,
        replica_id: str | None = None,
        log_retention: int = DEFAULT_LOG_RETENTION,
        log_ttl_ms: int = DEFAULT_LOG_TTL_MS,
        socket_timeout: float = DEFAULT_SOCKET_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        if log_retention < 1 or log_ttl_ms < 1:
            raise ValueError("log_retention and log_ttl_ms must be positive")
        super().__init__(
            url,
            key_prefix=key_prefix,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_timeout,
            max_connections=max_connections,
        )
        self.url = url
        self.replica_id = replica_id or uuid.uuid4().hex[:12]
        self.log_retention = log_retention
        self.log_ttl_ms = log_ttl_ms
        # Blocking reads wait longer than any socket timeout: their own connection.
        self._reader = Redis.from_url(
            url, socket_timeout=None, socket_connect_timeout=socket_timeout, single_connection_client=True
        )
        self._reader_id: int | None = None
        #: Counts read_new calls; the one in progress when `_reading`.
        self._reads = 0
        self._reading = False
        self._interrupted = False
        self._append = self.client.register_script(_APPEND)
        self._tail = self.client.register_script(_TAIL)
        self._unmark = self.client.register_script(_UNMARK)
        self._pubsub: PubSub | None = None
        self._listener: asyncio.Task[None] | None = None
        self._handler: Handler | None = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._handling: set[asyncio.Task[None]] = set()

    def __repr__(self) -> str:
        return f"RedisCluster(replica_id={self.replica_id!r}, key_prefix={self.key_prefix!r})"

    def _log_keys(self, thread_id: str) -> list[str]:
        """The thread's log and its epoch."""
        return [self.key("log", thread_id), self.key("log-epoch", thread_id)]

    # ------------------------------------------------------------ chunk logs

    @staticmethod
    def _encode(chunk: Chunk) -> bytes:
        return codec.encode(replace(chunk, offset=0))

    @staticmethod
    def _decode(entry_id: Any, body: Any) -> Chunk:
        chunk: Chunk = codec.decode(body, ignore_unknown_fields=True)  # (a newer replica's chunk, as this one knows it)
        return replace(chunk, offset=_offset(entry_id))

    async def append(self, thread_id: str, chunks: Sequence[Chunk]) -> list[int]:
        if not chunks:
            return []
        args: list[Any] = [self.log_retention, self.log_ttl_ms, uuid.uuid4().hex, *(self._encode(c) for c in chunks)]
        with self.failures("append"):
            first = int(text(await self._append(keys=self._log_keys(thread_id), args=args)))
        return list(range(first, first + len(chunks)))

    async def tail(self, thread_id: str) -> LogTail:
        with self.failures("tail"):
            epoch, last_id, body, first_id, trimmed = await self._tail(
                keys=self._log_keys(thread_id), args=[uuid.uuid4().hex, self.log_ttl_ms]
            )
        if not text(last_id):
            return LogTail(text(epoch), 0, 0)
        dropped_until = _offset(first_id) - 1 if int(trimmed) else 0
        return LogTail(text(epoch), _offset(last_id), dropped_until, self._decode(last_id, body))

    async def read(self, thread_id: str, after: int) -> list[Chunk]:
        with self.failures("read"):
            entries: Any = await self.client.xrange(self.key("log", thread_id), min=f"({after}-0", max="+")
        return [self._decode(entry_id, fields[b"c"]) for entry_id, fields in entries]

    async def read_new(self, cursors: Mapping[str, int], block_ms: int) -> dict[str, list[Chunk]]:
        if not cursors:
            return {}
        streams = {self.key("log", t): f"{after}-0" for t, after in cursors.items()}
        prefix = len(self.key("log", ""))
        with self.failures("read_new"):
            if self._reader_id is None:
                self._reader_id = int(await self._reader.client_id())
            self._reads += 1
            self._reading = True
            # An interrupt that came before this read began: do not block at all.
            block = None if self._interrupted else block_ms
            self._interrupted = False
            try:
                replies: Any = await self._reader.xread(streams, block=block)  # type: ignore[arg-type]
            except BaseException:
                self._reader_id = None  # the connection may be a new one next time
                raise
            finally:
                self._reading = False
        out: dict[str, list[Chunk]] = {}
        for key, entries in replies or []:
            out[text(key)[prefix:]] = [self._decode(entry_id, fields[b"c"]) for entry_id, fields in entries]
        return out

    async def delete_log(self, thread_id: str) -> None:
        with self.failures("delete_log"):
            await self.client.delete(*self._log_keys(thread_id))

    async def interrupt_read(self) -> None:
        if not self._reading or self._reader_id is None:
            self._interrupted = True  # the next read_new returns at once
            return
        read = self._reads
        # CLIENT UNBLOCK travels on another connection and may overtake the XREAD
        # it means to end: retry while that same read is still in progress.
        for _ in range(20):
            with contextlib.suppress(RedisError, OSError):
                if await self.client.client_unblock(self._reader_id):
                    return
            await asyncio.sleep(0.005)
            if not self._reading or self._reads != read:
                return

    # ------------------------------------------------------------ answers to retried requests

    async def claim_answer(self, key: str, ttl_ms: int) -> bool:
        with self.failures("claim_answer"):
            return bool(await self.client.set(self.key("answer", key), b"", nx=True, px=ttl_ms))

    async def store_answer(self, key: str, answer: Any, ttl_ms: int) -> None:
        with self.failures("store_answer"):
            await self.client.set(self.key("answer", key), codec.encode(answer), px=ttl_ms)

    async def recall_answer(self, key: str) -> Any:
        with self.failures("recall_answer"):
            raw = await self.client.get(self.key("answer", key))
        if raw is None:
            return None
        if not raw:
            return PENDING
        return codec.decode(raw, ignore_unknown_fields=True)

    async def drop_answer(self, key: str) -> None:
        with self.failures("drop_answer"):
            await self.client.delete(self.key("answer", key))

    # ------------------------------------------------------------ runs

    async def mark_running(self, marker: RunMarker) -> None:
        with self.failures("mark_running"):
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.hset(self.key("running"), marker.thread_id, json.dumps(asdict(marker)))
                pipe.hset(self.key("runs"), marker.run_id, marker.thread_id)
                await pipe.execute()

    async def unmark(self, thread_id: str, run_id: str) -> None:
        keys = [self.key("running"), self.key("runs")]
        with self.failures("unmark"):
            await self._unmark(keys=keys, args=[thread_id, run_id])

    @staticmethod
    def _marker(raw: Any) -> RunMarker | None:
        return None if raw is None else RunMarker(**json.loads(raw))

    async def running(self, thread_id: str) -> RunMarker | None:
        with self.failures("running"):
            return self._marker(await self.client.hget(self.key("running"), thread_id))

    async def run_marker(self, run_id: str) -> RunMarker | None:
        with self.failures("run_marker"):
            thread_id = await self.client.hget(self.key("runs"), run_id)
            if thread_id is None:
                return None
            marker = await self.running(text(thread_id))
        return marker if marker is not None and marker.run_id == run_id else None

    async def all_running(self) -> list[RunMarker]:
        with self.failures("all_running"):
            raw = await self.client.hvals(self.key("running"))
        return [RunMarker(**json.loads(r)) for r in raw]

    # ------------------------------------------------------------ requests

    async def serve(self, handler: Handler) -> None:
        if self._pubsub is not None:
            raise RuntimeError("RedisCluster.serve: already serving")
        self._handler = handler
        pubsub = self.client.pubsub()
        with self.failures("serve"):
            await pubsub.subscribe(self.key("replica", self.replica_id))
        self._pubsub = pubsub
        self._listener = asyncio.create_task(self._listen(), name=f"replica {self.replica_id} requests")

    async def _listen(self) -> None:
        assert self._pubsub is not None
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except (RedisError, OSError) as exc:
                log.warning("replica %s: request channel failed, resubscribing: %s", self.replica_id, exc)
                await asyncio.sleep(0.2)
                continue
            if message is None:
                continue
            try:
                # A newer replica's request or answer, as this one knows it: a
                # field it added is dropped, not the message (rolling upgrades).
                data: dict[str, Any] = codec.decode(message["data"], ignore_unknown_fields=True)
            except Exception:
                log.warning("replica %s: dropping a malformed request", self.replica_id)
                continue
            if "re" in data:
                waiter = self._waiting.get(str(data["re"]))
                if waiter is not None and not waiter.done():
                    waiter.set_result(data)
                continue
            task = asyncio.create_task(self._answer(data))
            self._handling.add(task)
            task.add_done_callback(self._handling.discard)

    async def _answer(self, data: dict[str, Any]) -> None:
        assert self._handler is not None
        reply: dict[str, Any] = {"re": data.get("id")}
        try:
            reply["body"] = await self._handler(data.get("body"))
        except AgentdError as exc:
            reply["error"] = error_to_wire(exc)
        except Exception as exc:
            log.exception("replica %s: request %r failed", self.replica_id, type(data.get("body")).__name__)
            reply["error"] = {"status": "UNAVAILABLE", "message": f"replica error: {exc}", "reason": "REPLICA_ERROR"}
        try:
            await self.client.publish(self.key("replica", str(data.get("from"))), codec.encode(reply))
        except (RedisError, OSError) as exc:
            log.warning("replica %s: could not answer %r: %s", self.replica_id, type(data.get("body")).__name__, exc)

    async def request(self, replica: str, message: Any, answer_within: float) -> Any:
        if self._pubsub is None:
            raise RuntimeError("RedisCluster.request: call serve() first (replies come on this replica's channel)")
        request_id = uuid.uuid4().hex
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        try:
            envelope = {"id": request_id, "from": self.replica_id, "body": message}
            with self.failures("request"):
                receivers = await self.client.publish(self.key("replica", replica), codec.encode(envelope))
            if not receivers:
                raise PeerGone(f"replica {replica} is not listening")
            try:
                async with asyncio.timeout(answer_within):
                    reply = await waiter
            except TimeoutError:
                raise PeerTimeout(
                    f"replica {replica} did not answer {type(message).__name__} within {answer_within:.1f}s"
                ) from None
        finally:
            self._waiting.pop(request_id, None)
        if "error" in reply:
            raise error_from_wire(reply["error"])
        return reply.get("body")

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, RedisError, OSError):
                await self._listener
        for task in list(self._handling):
            task.cancel()
        await asyncio.gather(*self._handling, return_exceptions=True)
        if self._pubsub is not None:
            with contextlib.suppress(RedisError, OSError):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
        with contextlib.suppress(RedisError, OSError):
            await self._reader.aclose()
        with contextlib.suppress(RedisError, OSError):
            await super().close()
