"""What every Redis backend shares: the pooled client, the key prefix, the
mapping of failures to the backend's own error, and optimistic transactions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, TypedDict, TypeVar

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, WatchError

__all__ = [
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_SOCKET_TIMEOUT",
    "MAX_ATTEMPTS",
    "RedisBackend",
    "RedisOptions",
    "begin",
    "pooled_client",
    "text",
]

DEFAULT_SOCKET_TIMEOUT = 2.0
DEFAULT_MAX_CONNECTIONS = 50
#: Optimistic transactions retried this often before giving up.
MAX_ATTEMPTS = 100

T = TypeVar("T")


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


def begin(pipe: Pipeline) -> None:
    """MULTI: the commands after it are queued and run by execute() as one transaction."""
    pipe.multi()  # type: ignore[no-untyped-call]  # untyped in redis-py


class RedisOptions(TypedDict, total=False):
    """RedisBackend's keywords, for the constructors that add their own."""

    client: Redis | None
    key_prefix: str | None
    socket_timeout: float | None
    socket_connect_timeout: float | None
    max_connections: int
    close_client: bool | None


class RedisBackend:
    """A backend on Redis: give a `url` (redis://host:port/db) or a `client`.

    A client built from `url` has a pool of at most `max_connections`; a call
    waits at most `socket_timeout` seconds for a free connection. A passed
    `client` keeps its own settings and is closed by `close()` only when
    `close_client` is true. Every key the backend writes starts with `key_prefix`
    (`default_key_prefix` unless given).
    """

    default_key_prefix: ClassVar[str]
    #: What a failed call raises: the error type of the interface the backend implements.
    error: ClassVar[type[Exception]]
    #: How error messages name the backend ("redis storage").
    label: ClassVar[str]
    #: The message of a failed command; fields: label, what, kind (the exception's type), exc.
    failed: ClassVar[str] = "{label} {what} failed: {kind}: {exc}"
    #: Raised inside `failures` when an entry read back cannot be decoded (the
    #: codec's CacheError): mapped to `error` for the backends that read their own entries.
    undecodable: ClassVar[tuple[type[Exception], ...]] = ()
    #: Raised inside `failures` by a malformed stored member or entry: mapped to `error` too.
    malformed: ClassVar[tuple[type[Exception], ...]] = ()

    def __init__(
        self,
        url: str | None = None,
        *,
        client: Redis | None = None,
        key_prefix: str | None = None,
        socket_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        socket_connect_timeout: float | None = DEFAULT_SOCKET_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        close_client: bool | None = None,
    ) -> None:
        super().__init__()
        self.client, self._close_client = pooled_client(
            type(self).__name__,
            url,
            client,
            socket_timeout=socket_timeout,
            socket_connect_timeout=socket_connect_timeout,
            max_connections=max_connections,
            close_client=close_client,
        )
        self.key_prefix = self.default_key_prefix if key_prefix is None else key_prefix

    def __repr__(self) -> str:
        return f"{type(self).__name__}(key_prefix={self.key_prefix!r})"

    def key(self, *parts: str) -> str:
        """`key_prefix` and the parts, joined by colons."""
        return self.key_prefix + ":".join(parts)

    @contextmanager
    def failures(self, what: str) -> Iterator[None]:
        """Raises what fails inside as the backend's `error`, naming `what` failed."""
        try:
            yield
        except self.undecodable as exc:
            raise self.error(f"{self.label} {what}: {exc}") from exc
        except self.malformed as exc:
            raise self.error(f"{self.label} {what}: a malformed stored entry ({type(exc).__name__}: {exc})") from exc
        except WatchError:  # not a failure: `optimistic` runs the transaction again
            raise
        except (RedisError, OSError) as exc:
            message = self.failed.format(label=self.label, what=what, kind=type(exc).__name__, exc=exc)
            raise self.error(message) from exc

    async def optimistic(self, what: str, step: Callable[[Pipeline], Awaitable[T]]) -> T:
        """`step(pipe)` as one optimistic transaction: it WATCHes the keys it
        reads, reads them, calls `begin(pipe)`, queues its writes and executes
        them; it runs again on fresh reads while another client changed a
        watched key meanwhile (at most MAX_ATTEMPTS times)."""
        for _ in range(MAX_ATTEMPTS):
            async with self.client.pipeline(transaction=True) as pipe:  # leaving it unwatches
                try:
                    return await step(pipe)
                except WatchError:
                    continue
        raise self.error(f"{self.label} {what}: too many concurrent changes")

    async def ping(self) -> bool:
        """True when the server answers (`error` when it does not)."""
        with self.failures("ping"):
            return bool(await self.client.ping())

    async def close(self) -> None:
        if self._close_client:
            await self.client.aclose()
