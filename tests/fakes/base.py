"""The HTTP/1.1 and server-sent-events plumbing of the fake provider servers.

A provider's fake (openai_server, anthropic_server, google_server) subclasses
`FakeProviderServer` and says only what is its provider's: which reply a
request gets (`pick`), how one stream event is written (`encode`), and its
headers and error bodies. Everything else is here, once:

* a loopback server (`start`/`close`, or `async with`), keep-alive
  connections, requests read with a content length or chunked, and recorded
  in arrival order (`requests`, `bodies`, `wait_for_requests`);
* replies queued with `push(...)`, `default` once the queue is empty;
* `StreamReply`: 200, chunked, one event per entry, then the terminating
  chunk. `delay` seconds between events; `disconnect_after=n` sends n events
  and drops the connection (no terminating chunk: a mid-stream disconnect);
  `hang_after=n` sends n events and holds the stream open until the client
  goes away (or `hang_timeout` passes); `end_after=n` sends n events and ends
  the response cleanly (whatever the provider sends last is not sent);
* `ErrorReply`: an HTTP error with a JSON body (`body`) or a text one (`text`).

What a test can wait on, per request: `finished` (the reply was written),
`disconnected` (the client went away before the reply was complete) and
`closed` (the connection the request came in on is closed).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Generic, Self, TypeVar
from urllib.parse import parse_qsl, urlsplit

#: Reason phrases the providers send that the standard library does not know
#: (or words otherwise).
_REASONS = {413: "Payload Too Large", 529: "Overloaded"}

EventT = TypeVar("EventT")


@dataclass(kw_only=True)
class Pacing:
    """How a stream reply is sent (see the module docstring)."""

    delay: float = 0.0
    disconnect_after: int | None = None
    hang_after: int | None = None
    hang_timeout: float = 30.0
    end_after: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class StreamReply(Pacing, Generic[EventT]):
    """A 200 event stream of `events`, each written by the server's `encode`."""

    events: list[EventT]


@dataclass
class ErrorReply:
    """An HTTP error with a JSON body (`body`; the provider's default when None),
    or a raw text body (`text`)."""

    status: int
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    text: str | None = None


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    raw_body: bytes
    #: The client went away before the reply was complete.
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    #: The reply was written (or the connection failed while it was).
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    #: The connection this request came in on is closed.
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def body(self) -> Any:
        return json.loads(self.raw_body) if self.raw_body else None


def reason(status: int) -> str:
    if status in _REASONS:
        return _REASONS[status]
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {reason(status)}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def sse(data: str, event: str | None = None) -> bytes:
    """One server-sent event: an `event:` line when named, and the data."""
    return (f"event: {event}\n" if event else "").encode() + f"data: {data}\n\n".encode()


class FakeProviderServer(Generic[EventT]):
    """A provider's fake HTTP server: the subclass picks replies and encodes events."""

    #: Headers of every 200 stream, before the reply's own.
    stream_headers: tuple[tuple[str, str], ...] = (
        ("Content-Type", "text/event-stream; charset=utf-8"),
        ("Transfer-Encoding", "chunked"),
        ("Cache-Control", "no-cache"),
    )
    json_type = "application/json"
    text_type = "text/plain; charset=utf-8"

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[RecordedRequest] = []
        self.default: StreamReply[EventT] | ErrorReply = ErrorReply(500)
        self._queue: list[StreamReply[EventT] | ErrorReply] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._arrived = asyncio.Condition()

    # ------------------------------------------------------------ what a provider says

    def pick(self, request: RecordedRequest) -> StreamReply[EventT] | ErrorReply:
        """The reply to `request`: by default the next queued one."""
        return self.next_reply()

    def encode(self, event: EventT) -> bytes:
        """One stream event as written to the wire."""
        raise NotImplementedError

    def closing_events(self, reply: StreamReply[EventT]) -> list[bytes]:
        """What a stream sent whole ends with, before the terminating chunk."""
        return []

    def extra_headers(self, kind: str) -> list[tuple[str, str]]:
        """Headers every reply of `kind` ("stream" or "error") carries."""
        return []

    def default_error_body(self, reply: ErrorReply) -> dict[str, Any]:
        """The JSON body of an error reply given without one."""
        return {}

    # ------------------------------------------------------------ the server

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    def push(self, *replies: StreamReply[EventT] | ErrorReply) -> None:
        """Queues replies for the next requests, in order."""
        self._queue.extend(replies)

    def next_reply(self) -> StreamReply[EventT] | ErrorReply:
        return self._queue.pop(0) if self._queue else self.default

    async def wait_for_requests(self, count: int, within: float = 5.0) -> list[RecordedRequest]:
        """Returns once `count` requests arrived; TimeoutError after `within` seconds."""

        async def arrived() -> None:
            async with self._arrived:
                await self._arrived.wait_for(lambda: len(self.requests) >= count)

        await asyncio.wait_for(arrived(), within)
        return self.requests

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._accept, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()  # the connection handlers see EOF and return
        if self._tasks:
            _done, pending = await asyncio.wait(list(self._tasks), timeout=5)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Self:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ connections

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        seen: list[RecordedRequest] = []
        try:
            while True:  # keep-alive: several requests per connection
                request = await _read_request(reader)
                if request is None:
                    return
                seen.append(request)
                async with self._arrived:
                    self.requests.append(request)
                    self._arrived.notify_all()
                keep_open = await self._answer(request, reader, writer)
                request.finished.set()
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            return  # close() ends stuck connections; ending quietly keeps asyncio's stream callback silent
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            for request in seen:
                request.closed.set()

    async def _answer(
        self, request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Writes the reply; False when the connection is done."""
        reply = self.pick(request)
        if isinstance(reply, ErrorReply):
            await self._write_error(writer, reply)
            return True
        return await self._stream(request, reply, reader, writer)

    async def _write_error(self, writer: asyncio.StreamWriter, reply: ErrorReply) -> None:
        if reply.text is not None:
            payload, content_type = reply.text.encode(), self.text_type
        else:
            payload = json.dumps(reply.body if reply.body is not None else self.default_error_body(reply)).encode()
            content_type = self.json_type
        headers = [
            ("Content-Type", content_type),
            ("Content-Length", str(len(payload))),
            *self.extra_headers("error"),
            *reply.headers.items(),
        ]
        writer.write(head(reply.status, headers) + payload)
        await writer.drain()

    async def _stream(
        self,
        request: RecordedRequest,
        reply: StreamReply[EventT],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        headers = [*self.stream_headers, *self.extra_headers("stream"), *reply.headers.items()]
        cuts = (reply.disconnect_after, reply.hang_after, reply.end_after)
        cut = min((n for n in cuts if n is not None), default=None)
        try:
            writer.write(head(200, headers))
            await writer.drain()
            for i, event in enumerate(reply.events):
                if cut is not None and i >= cut:
                    break
                if i and reply.delay:
                    await asyncio.sleep(reply.delay)
                _write_chunk(writer, self.encode(event))
                await writer.drain()
            if reply.disconnect_after is not None:
                writer.transport.abort()  # mid-stream: no terminating chunk
                return False
            if reply.hang_after is not None:
                await _hold(request, reply.hang_timeout, reader)
                return False
            if reply.end_after is None:
                for data in self.closing_events(reply):
                    _write_chunk(writer, data)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            request.disconnected.set()
            return False


def _write_chunk(writer: asyncio.StreamWriter, data: bytes) -> None:
    writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")


async def _hold(request: RecordedRequest, limit: float, reader: asyncio.StreamReader) -> None:
    """Keeps the stream open until the client closes its end (or `limit` seconds pass)."""
    try:
        async with asyncio.timeout(limit):
            while await reader.read(4096):
                pass
    except TimeoutError:
        return
    except ConnectionError:
        pass
    request.disconnected.set()


async def _read_request(reader: asyncio.StreamReader) -> RecordedRequest | None:
    try:
        head_bytes = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    lines = head_bytes.decode("latin-1").split("\r\n")
    method, target, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
    url = urlsplit(target)
    return RecordedRequest(method, url.path, dict(parse_qsl(url.query)), headers, body)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)
