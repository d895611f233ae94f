"""The Redis client every Redis backend builds the same way."""

from __future__ import annotations

from typing import Any

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError

DEFAULT_SOCKET_TIMEOUT = 2.0
DEFAULT_MAX_CONNECTIONS = 50


def pooled_client(
    owner: str,
    url: str | None,
    client: Redis | None,
    *,
    socket_timeout: float | None,
    socket_connect_timeout: float | None,
    max_connections: int,
    close_client: bool | None,
) -> tuple[Redis, bool]:
    """(the client, whether `close()` closes it): built from `url` with a pool of
    at most `max_connections` (a call waits at most `socket_timeout` for a free
    connection), or the caller's `client` as it is, closed only when asked."""
    if (url is None) == (client is None):
        raise ValueError(f"{owner} needs exactly one of url and client")
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")
    if client is None:
        assert url is not None
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=socket_timeout,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            # One immediate retry on a broken connection (pooled connections
            # after a server restart); none on timeouts.
            retry=Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)),
        )
        client = Redis.from_pool(pool)
    return client, (url is not None if close_client is None else close_client)


def text(value: Any) -> str:
    """A reply as str (bytes unless a passed client decodes responses)."""
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)
