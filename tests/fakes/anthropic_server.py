"""A local HTTP server speaking the Anthropic Messages API's streaming wire format.

`POST /v1/messages` answers the way the real API does: `200 text/event-stream`
(chunked), one server-sent event per stream event,

    event: <type>
    data: {"type": "<type>", ...}

in the documented order: `message_start`, then per content block
`content_block_start` / `content_block_delta`* / `content_block_stop` (text_delta,
input_json_delta for tool use, thinking_delta and signature_delta for thinking),
`ping`s anywhere, `message_delta` with the stop reason and the final usage, and
`message_stop`. Failures are either an HTTP error with the JSON body
`{"type": "error", "error": {"type", "message"}, "request_id"}`, or an `error`
event inside a stream that started with 200.

Each request takes the next programmed reply (`server.push(...)`), or
`server.default` once the queue is empty. Every request is recorded (method,
path, headers, JSON body), with `disconnected` set when the client closed the
connection before the reply was complete.

    async with AnthropicServer() as server:
        server.push(text_reply("Hel", "lo"), error_reply(529))
        ...  # point the SDK at server.base_url
        assert server.requests[0].body["messages"][0]["role"] == "user"
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    413: "Payload Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
    529: "Overloaded",
}
#: The error type the API sends with each status.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}

#: One stream event: (event type, data object).
Event = tuple[str, dict[str, Any]]


# ---------------------------------------------------------------- replies


@dataclass
class StreamReply:
    """A 200 event stream. `delay` seconds between events.
    `disconnect_after=n`: send n events, then drop the connection mid-stream.
    `hang_after=n`: send n events, then hold the stream open until the client
    goes away (or `hang_timeout` passes).
    `end_after=n`: send n events, then end the response cleanly (no message_stop)."""

    events: list[Event]
    delay: float = 0.0
    disconnect_after: int | None = None
    hang_after: int | None = None
    hang_timeout: float = 30.0
    end_after: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ErrorReply:
    """An HTTP error with a JSON body (`body`), or a raw text body (`text`)."""

    status: int
    body: dict[str, Any] | None = None
    text: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


Reply = StreamReply | ErrorReply


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def body(self) -> Any:
        return json.loads(self.raw_body) if self.raw_body else None


# ---------------------------------------------------------------- wire builders


def message_start(
    input_tokens: int = 10,
    *,
    cache_read: int | None = None,
    cache_creation: int | None = None,
    model: str = "claude-test",
    id: str = "msg_fake01",
) -> Event:
    usage: dict[str, Any] = {"input_tokens": input_tokens, "output_tokens": 1}
    if cache_read is not None:
        usage["cache_read_input_tokens"] = cache_read
    if cache_creation is not None:
        usage["cache_creation_input_tokens"] = cache_creation
    message = {
        "id": id,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    return ("message_start", {"type": "message_start", "message": message})


def ping() -> Event:
    return ("ping", {"type": "ping"})


def block_start(index: int, block: dict[str, Any]) -> Event:
    return ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})


def block_delta(index: int, delta: dict[str, Any]) -> Event:
    return ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})


def block_stop(index: int) -> Event:
    return ("content_block_stop", {"type": "content_block_stop", "index": index})


def text_block(index: int, *pieces: str) -> list[Event]:
    return [
        block_start(index, {"type": "text", "text": ""}),
        *(block_delta(index, {"type": "text_delta", "text": p}) for p in pieces),
        block_stop(index),
    ]


def thinking_block(index: int, *pieces: str, signature: str = "sig-fake") -> list[Event]:
    return [
        block_start(index, {"type": "thinking", "thinking": "", "signature": ""}),
        *(block_delta(index, {"type": "thinking_delta", "thinking": p}) for p in pieces),
        block_delta(index, {"type": "signature_delta", "signature": signature}),
        block_stop(index),
    ]


def tool_use_block(index: int, id: str, name: str, *json_pieces: str) -> list[Event]:
    """A tool_use block whose input arrives as `input_json_delta` pieces (the
    first one empty, as the API sends it)."""
    return [
        block_start(index, {"type": "tool_use", "id": id, "name": name, "input": {}}),
        block_delta(index, {"type": "input_json_delta", "partial_json": ""}),
        *(block_delta(index, {"type": "input_json_delta", "partial_json": p}) for p in json_pieces),
        block_stop(index),
    ]


def message_delta(
    stop_reason: str = "end_turn",
    output_tokens: int = 5,
    *,
    stop_sequence: str | None = None,
    thinking_tokens: int | None = None,
) -> Event:
    usage: dict[str, Any] = {"output_tokens": output_tokens}
    if thinking_tokens is not None:
        usage["output_tokens_details"] = {"thinking_tokens": thinking_tokens}
    return (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": stop_sequence},
            "usage": usage,
        },
    )


def message_stop() -> Event:
    return ("message_stop", {"type": "message_stop"})


def error_event(error_type: str = "overloaded_error", message: str = "Overloaded") -> Event:
    return ("error", {"type": "error", "error": {"type": error_type, "message": message}})


def reply(
    *blocks: list[Event],
    stop_reason: str = "end_turn",
    input_tokens: int = 10,
    output_tokens: int = 5,
    cache_read: int | None = None,
    cache_creation: int | None = None,
    thinking_tokens: int | None = None,
    **stream: Any,
) -> StreamReply:
    """A whole message: message_start, a ping, the blocks, message_delta with the
    stop reason and usage, message_stop."""
    events: list[Event] = [message_start(input_tokens, cache_read=cache_read, cache_creation=cache_creation), ping()]
    for block in blocks:
        events.extend(block)
    events.append(message_delta(stop_reason, output_tokens, thinking_tokens=thinking_tokens))
    events.append(message_stop())
    return StreamReply(events, **stream)


def text_reply(*pieces: str, **options: Any) -> StreamReply:
    return reply(text_block(0, *pieces), **options)


def error_body(status: int, message: str | None = None, error_type: str | None = None) -> dict[str, Any]:
    return {
        "type": "error",
        "error": {"type": error_type or ERROR_TYPES.get(status, "api_error"), "message": message or f"fake {status}"},
        "request_id": f"req_fake{status}",
    }


def error_reply(
    status: int, message: str | None = None, error_type: str | None = None, *, headers: dict[str, str] | None = None
) -> ErrorReply:
    return ErrorReply(status, error_body(status, message, error_type), headers=dict(headers or {}))


# ---------------------------------------------------------------- the server


class AnthropicServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.port = 0
        self.requests: list[RecordedRequest] = []
        self.default: Reply = error_reply(500, "the fake server has no reply programmed for this request")
        self._queue: list[Reply] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._arrived = asyncio.Condition()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def push(self, *replies: Reply) -> None:
        """Queues replies for the next requests, in order."""
        self._queue.extend(replies)

    @property
    def bodies(self) -> list[Any]:
        return [r.body for r in self.requests]

    async def wait_for_requests(self, count: int, within: float = 5.0) -> list[RecordedRequest]:
        async def arrived() -> None:
            async with self._arrived:
                await self._arrived.wait_for(lambda: len(self.requests) >= count)

        await asyncio.wait_for(arrived(), within)
        return self.requests

    async def start(self) -> AnthropicServer:
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

    async def __aenter__(self) -> AnthropicServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ connections

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # type: ignore[arg-type]
        self._writers.add(writer)
        try:
            while True:  # keep-alive: several requests per connection
                request = await self._read_request(reader)
                if request is None:
                    return
                async with self._arrived:
                    self.requests.append(request)
                    self._arrived.notify_all()
                keep_open = await self._answer(request, reader, writer)
                request.finished.set()
                if not keep_open:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            self._tasks.discard(task)  # type: ignore[arg-type]
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
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
        return RecordedRequest(method, urlsplit(target).path, headers, body)

    async def _answer(
        self, request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Writes the reply; False when the connection is done."""
        if request.method != "POST" or request.path != "/v1/messages":
            answer: Reply = error_reply(404, f"no route for {request.method} {request.path}")
        elif not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            answer = error_reply(401, "an API key is required (x-api-key or authorization header)")
        else:
            answer = self._queue.pop(0) if self._queue else self.default
        if isinstance(answer, ErrorReply):
            await _write_error(writer, answer)
            return True
        return await self._stream(request, answer, reader, writer)

    async def _stream(
        self, request: RecordedRequest, answer: StreamReply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        head = [
            "HTTP/1.1 200 OK",
            "Content-Type: text/event-stream; charset=utf-8",
            "Transfer-Encoding: chunked",
            "Cache-Control: no-cache",
            "request-id: req_fake_stream",
            *(f"{k}: {v}" for k, v in answer.headers.items()),
        ]
        cut = min(
            (n for n in (answer.disconnect_after, answer.hang_after, answer.end_after) if n is not None), default=None
        )
        try:
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            await writer.drain()
            for i, (kind, data) in enumerate(answer.events):
                if cut is not None and i >= cut:
                    break
                if i and answer.delay:
                    await asyncio.sleep(answer.delay)
                event = f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
                writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                await writer.drain()
            if answer.disconnect_after is not None:
                writer.transport.abort()  # mid-stream: no terminating chunk
                return False
            if answer.hang_after is not None:
                await self._hold(request, answer, reader)
                return False
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            request.disconnected.set()
            return False

    @staticmethod
    async def _hold(request: RecordedRequest, answer: StreamReply, reader: asyncio.StreamReader) -> None:
        """Keeps the stream open until the client closes its end."""
        try:
            async with asyncio.timeout(answer.hang_timeout):
                while await reader.read(4096):
                    pass
        except TimeoutError:
            return
        except ConnectionError:
            pass
        request.disconnected.set()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readuntil(b"\r\n")
            return bytes(body)
        body += await reader.readexactly(size)
        await reader.readexactly(2)


async def _write_error(writer: asyncio.StreamWriter, answer: ErrorReply) -> None:
    if answer.text is not None:
        payload, content_type = answer.text.encode(), "text/plain; charset=utf-8"
    else:
        payload = json.dumps(answer.body if answer.body is not None else error_body(answer.status)).encode()
        content_type = "application/json"
    head = [
        f"HTTP/1.1 {answer.status} {_REASONS.get(answer.status, 'Error')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
        "request-id: req_fake_error",
        *(f"{k}: {v}" for k, v in answer.headers.items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()
