"""What every call passes before it is served: who is calling
(authentication), whether its role may make this call (authorization), and
its caller's limits (a token bucket per identity, kept in the server cache so
that replicas share it; concurrent streams per identity, on this replica).

The caller is then the call's `authz.CALLER` for the servicer to scope ids by."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from agentd.grpc.auth import Authenticator
from agentd.grpc.authz import check_role
from agentd.grpc.errors import Context
from agentd.runtime.cache import CacheError, ServerCache
from agentd.runtime.errors import ResourceExhausted
from agentd.runtime.identity import ANONYMOUS, Identity

__all__ = ["Gate", "Limits"]

log = logging.getLogger("agentd.gate")


@dataclass(frozen=True)
class Limits:
    """Per-caller limits: request rate, burst and concurrent streams."""

    #: Requests per second per identity, and how many may come at once (0: no limit).
    requests_per_second: float = 0.0
    burst: int = 0
    #: Concurrent streams and subscriptions per identity on one replica (0: no limit).
    max_streams: int = 0

    def __post_init__(self) -> None:
        if self.requests_per_second < 0 or self.burst < 0 or self.max_streams < 0:
            raise ValueError("auth.limits: values must not be negative")
        if self.requests_per_second and self.burst < 1:
            raise ValueError("auth.limits.burst: at least 1 when requests_per_second is set")


def _who(identity: Identity) -> str:
    return f"{identity.tenant}/{identity.subject}"


class Gate:
    def __init__(
        self, authenticator: Authenticator, limits: Limits | None = None, cache: ServerCache | None = None
    ) -> None:
        self.authenticator = authenticator
        self.limits = limits or Limits()
        self.cache = cache
        if self.limits.requests_per_second and cache is None:
            raise ValueError("auth.limits.requests_per_second needs the server cache")
        #: Nothing to read off a call and no limit to take from: every caller
        #: is ANONYMOUS, admitted without a look (the servers' wrappers skip admit).
        self.admits_everyone = not authenticator.enabled and not self.limits.requests_per_second
        #: Open streams by identity (an entry exists only while one is open).
        self._streams: dict[str, int] = {}

    async def admit(self, method: str, context: Context) -> Identity:
        """The caller of `method` ("<package.Service>/<Method>"), or the status refusing it."""
        if self.authenticator.enabled:
            metadata = {k: v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
            peer = {k: list(v) for k, v in context.auth_context().items()}
            identity = self.authenticator.authenticate(metadata, peer)
            check_role(identity, method)
        else:  # no authentication: nothing to read off the call (ANONYMOUS holds every role)
            identity = ANONYMOUS
        await self._rate(identity)
        return identity

    async def _rate(self, identity: Identity) -> None:
        limits = self.limits
        if not limits.requests_per_second or self.cache is None:
            return
        try:
            wait = await self.cache.take_token(
                f"agentd:rate:{_who(identity)}", limits.requests_per_second, limits.burst
            )
        except CacheError as exc:  # the cache fails open, here as everywhere
            log.warning("rate limit not checked (the cache failed): %s", exc)
            return
        if wait > 0:
            raise ResourceExhausted(
                f"{identity.subject} is over {limits.requests_per_second:g} requests per second",
                "RATE_LIMITED",
                {"limit_per_second": f"{limits.requests_per_second:g}"},
                retry_after=wait,
            )

    @contextmanager
    def stream(self, identity: Identity) -> Iterator[None]:
        """Holds one of the identity's stream slots while a stream is open."""
        limit = self.limits.max_streams
        who = _who(identity)
        open_now = self._streams.get(who, 0)
        if limit and open_now >= limit:
            raise ResourceExhausted(
                f"{identity.subject} already has {open_now} streams open here (at most {limit})",
                "TOO_MANY_STREAMS",
                {"max_streams": str(limit)},
            )
        self._streams[who] = open_now + 1
        try:
            yield
        finally:
            left = self._streams[who] - 1
            if left:
                self._streams[who] = left
            else:
                del self._streams[who]
