"""A local HTTP server speaking the Gemini API's streaming wire format.

`POST /{version}/models/{model}:streamGenerateContent?alt=sse` answers the way the
real API does: `200 text/event-stream` (chunked), one
`data: {GenerateContentResponse JSON}\\n\\n` event per chunk, the finish reason and
usage metadata on the last one. Errors are JSON bodies
`{"error": {"code", "message", "status"}}` with the HTTP status.

Each request takes the next programmed reply (`server.push(...)`), or
`server.default` once the queue is empty. Every request is recorded (method,
path, query, headers, JSON body) with an event set when the client closed the
connection before the reply was complete (`RecordedRequest.disconnected`).

    async with GoogleServer() as server:
        server.push(reply_text("Hel", "lo"), error_reply(503))
        ...  # point the SDK at server.base_url
        assert server.requests[0].body["contents"][0]["role"] == "user"
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


# ---------------------------------------------------------------- replies


@dataclass
class StreamReply:
    """A 200 event stream of `chunks` (each a GenerateContentResponse dict, or an
    `{"error": ...}` object sent as an event). `delay` seconds between chunks.
    `disconnect_after=n`: send n chunks, then drop the connection mid-stream.
    `hang_after=n`: send n chunks, then hold the stream open until the client
    goes away (or `hang_timeout` passes)."""

    chunks: list[dict[str, Any]]
    delay: float = 0.0
    disconnect_after: int | None = None
    hang_after: int | None = None
    hang_timeout: float = 30.0
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
    query: dict[str, str]
    headers: dict[str, str]
    raw_body: bytes
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def body(self) -> Any:
        return json.loads(self.raw_body) if self.raw_body else None


# ---------------------------------------------------------------- wire builders


def text_part(text: str, *, thought: bool = False, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text}
    if thought:
        part["thought"] = True
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def call_part(
    name: str, args: dict[str, Any] | None = None, *, id: str | None = None, signature: str | None = None
) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args if args is not None else {}}
    if id is not None:
        call["id"] = id
    part: dict[str, Any] = {"functionCall": call}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def inline_part(mime_type: str, data_b64: str) -> dict[str, Any]:
    return {"inlineData": {"mimeType": mime_type, "data": data_b64}}


def usage(
    prompt: int = 0,
    candidates: int = 0,
    *,
    total: int | None = None,
    cached: int | None = None,
    thoughts: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"promptTokenCount": prompt, "candidatesTokenCount": candidates}
    if cached is not None:
        out["cachedContentTokenCount"] = cached
    if thoughts is not None:
        out["thoughtsTokenCount"] = thoughts
    out["totalTokenCount"] = total if total is not None else prompt + candidates + (thoughts or 0)
    return out


def chunk(
    *parts: dict[str, Any],
    finish: str | None = None,
    usage_metadata: dict[str, Any] | None = None,
    model_version: str = "gemini-test",
    response_id: str = "resp-1",
    **candidate_fields: Any,
) -> dict[str, Any]:
    """One GenerateContentResponse as streamed: one candidate with `parts`."""
    candidate: dict[str, Any] = {"index": 0}
    if parts:
        candidate["content"] = {"role": "model", "parts": list(parts)}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate.update(candidate_fields)
    out: dict[str, Any] = {"candidates": [candidate]}
    if usage_metadata is not None:
        out["usageMetadata"] = usage_metadata
    out["modelVersion"] = model_version
    out["responseId"] = response_id
    return out


def reply_text(
    *pieces: str, finish: str = "STOP", usage_metadata: dict[str, Any] | None = None, **stream: Any
) -> StreamReply:
    """A text answer, one piece per chunk; the last chunk carries the finish
    reason and usage (as the real API sends them)."""
    usage_metadata = usage_metadata if usage_metadata is not None else usage(3, len(pieces))
    chunks = [chunk(text_part(p)) for p in pieces[:-1]]
    last = [text_part(pieces[-1])] if pieces else []
    chunks.append(chunk(*last, finish=finish, usage_metadata=usage_metadata))
    return StreamReply(chunks, **stream)


def reply_calls(*calls: dict[str, Any], usage_metadata: dict[str, Any] | None = None) -> StreamReply:
    """Function calls (`call_part(...)`) in one chunk, finish STOP."""
    usage_metadata = usage_metadata if usage_metadata is not None else usage(5, 4)
    return StreamReply([chunk(*calls, finish="STOP", usage_metadata=usage_metadata)])


def error_body(status: int, message: str | None = None, status_name: str | None = None) -> dict[str, Any]:
    return {
        "error": {
            "code": status,
            "message": message or f"fake error {status}",
            "status": status_name or _STATUS_NAMES.get(status, "UNKNOWN"),
        }
    }


def error_reply(
    status: int, message: str | None = None, status_name: str | None = None, *, headers: dict[str, str] | None = None
) -> ErrorReply:
    return ErrorReply(status, error_body(status, message, status_name), headers=dict(headers or {}))


# ---------------------------------------------------------------- the server


class GoogleServer:
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

    async def wait_for_requests(self, count: int) -> list[RecordedRequest]:
        """Returns once `count` requests arrived (wrap it in a timeout)."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)
        return self.requests

    async def start(self) -> GoogleServer:
        self._server = await asyncio.start_server(self._accept, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> GoogleServer:
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
        url = urlsplit(target)
        return RecordedRequest(method, url.path, dict(parse_qsl(url.query)), headers, body)

    async def _answer(
        self, request: RecordedRequest, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        """Writes the reply; False when the connection is done."""
        if request.method != "POST" or not request.path.endswith(":streamGenerateContent"):
            reply: Reply = error_reply(404, f"no route for {request.method} {request.path}")
        else:
            reply = self._queue.pop(0) if self._queue else self.default
        if isinstance(reply, ErrorReply):
            await _write_error(writer, reply)
            return True
        return await self._stream(request, reply, reader, writer)

    async def _stream(
        self, request: RecordedRequest, reply: StreamReply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        head = [
            "HTTP/1.1 200 OK",
            "Content-Type: text/event-stream",
            "Transfer-Encoding: chunked",
            "Cache-Control: no-cache",
            *(f"{k}: {v}" for k, v in reply.headers.items()),
        ]
        try:
            writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
            await writer.drain()
            for i, item in enumerate(reply.chunks):
                if reply.disconnect_after is not None and i >= reply.disconnect_after:
                    break
                if reply.hang_after is not None and i >= reply.hang_after:
                    break
                if i and reply.delay:
                    await asyncio.sleep(reply.delay)
                event = f"data: {json.dumps(item, separators=(',', ':'))}\n\n".encode()
                writer.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                await writer.drain()
            if reply.disconnect_after is not None:
                writer.transport.abort()  # mid-stream: no terminating chunk
                return False
            if reply.hang_after is not None:
                await self._hold(request, reply, reader)
                return False
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            request.disconnected.set()
            return False

    @staticmethod
    async def _hold(request: RecordedRequest, reply: StreamReply, reader: asyncio.StreamReader) -> None:
        """Keeps the stream open until the client closes its end."""
        try:
            async with asyncio.timeout(reply.hang_timeout):
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


async def _write_error(writer: asyncio.StreamWriter, reply: ErrorReply) -> None:
    if reply.text is not None:
        payload, content_type = reply.text.encode(), "text/plain; charset=UTF-8"
    else:
        payload = json.dumps(reply.body if reply.body is not None else error_body(reply.status)).encode()
        content_type = "application/json; charset=UTF-8"
    head = [
        f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Error')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(payload)}",
        *(f"{k}: {v}" for k, v in reply.headers.items()),
    ]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
    await writer.drain()
