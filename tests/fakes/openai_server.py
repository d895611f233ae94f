"""A local HTTP/1.1 server speaking OpenAI's Chat Completions streaming wire format.

    async with FakeOpenAIServer() as server:
        server.script(text_reply("Hel", "lo"), ErrorReply(500, error_body("boom", "server_error")))
        ... point the SDK at server.base_url ...
        server.requests[0].body            # each request's JSON body, in arrival order
        await server.requests[0].closed.wait()   # the client closed that connection

Each POST takes the next scripted reply (an unscripted request gets a 500):

* `SSEReply(events)`: 200 `text/event-stream`, chunked, one `data: {json}\\n\\n`
  event per entry, then `data: [DONE]\\n\\n` (as the provider documents it);
  `disconnect_after=n` drops the connection after n events (no [DONE], no
  terminating chunk: a mid-stream disconnect); `hang_after=n` keeps the
  response open after n events until the client goes away; `delay` paces events.
* `ErrorReply(status, body, headers)`: a JSON error body such as
  `{"error": {"message", "type", "param", "code"}}`.

Builders for the chunks: `chunk`, `text_chunks`, `tool_call_chunks`,
`usage_chunk`, `text_reply`, `tool_reply`, `error_body`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any

MODEL = "gpt-test"
HANG_LIMIT_SECONDS = 30.0


@dataclass
class SSEReply:
    events: list[dict[str, Any] | str]
    done: bool = True
    disconnect_after: int | None = None
    hang_after: int | None = None
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class ErrorReply:
    status: int
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


Reply = SSEReply | ErrorReply


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    #: Set when the client closed the connection this request came in on.
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def body(self) -> Any:
        return json.loads(self.raw_body) if self.raw_body else None


# ---------------------------------------------------------------- chunk builders


def chunk(
    delta: dict[str, Any] | None = None,
    finish_reason: str | None = None,
    *,
    usage: dict[str, Any] | None = None,
    choices: bool = True,
    id: str = "chatcmpl-test",
    model: str = MODEL,
) -> dict[str, Any]:
    """One `chat.completion.chunk`."""
    out: dict[str, Any] = {
        "id": id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": "fp_test",
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish_reason}]
        if choices
        else [],
        "usage": usage,  # null on every chunk but the last when include_usage is set
    }
    return out


def usage_chunk(
    prompt: int, completion: int, *, cached: int | None = None, reasoning: int | None = None
) -> dict[str, Any]:
    """The last chunk when `stream_options.include_usage` is set: no choices, the usage."""
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached, "audio_tokens": 0}
    if reasoning is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning, "audio_tokens": 0}
    return chunk(usage=usage, choices=False)


def text_chunks(*pieces: str, finish_reason: str = "stop") -> list[dict[str, Any] | str]:
    events: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events.extend(chunk({"content": piece}) for piece in pieces)
    events.append(chunk({}, finish_reason))
    return events


def tool_call_chunks(calls: list[tuple[str, str, list[str]]]) -> list[dict[str, Any] | str]:
    """Tool calls as the provider streams them: per call (id, name, argument
    fragments), a first delta with the id and name, then one delta per fragment."""
    events: list[dict[str, Any] | str] = [chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, fragments) in enumerate(calls):
        first = {"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append(chunk({"tool_calls": [first]}))
        events.extend(chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]}) for f in fragments)
    events.append(chunk({}, "tool_calls"))
    return events


def text_reply(*pieces: str, finish_reason: str = "stop", prompt: int = 5, completion: int = 2) -> SSEReply:
    return SSEReply([*text_chunks(*pieces, finish_reason=finish_reason), usage_chunk(prompt, completion)])


def tool_reply(calls: list[tuple[str, str, list[str]]], prompt: int = 5, completion: int = 2) -> SSEReply:
    return SSEReply([*tool_call_chunks(calls), usage_chunk(prompt, completion)])


def error_body(message: str, type: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


# ---------------------------------------------------------------- the server


class FakeOpenAIServer:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: list[Reply] = []
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        self._replies.extend(replies)

    async def start(self) -> FakeOpenAIServer:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> FakeOpenAIServer:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # ------------------------------------------------------------ HTTP

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        last: RecordedRequest | None = None
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    break
                last = request
                self.requests.append(request)
                reply = self._replies.pop(0) if self._replies else ErrorReply(500, error_body("unscripted", "test"))
                keep_open = await self._reply(reply, reader, writer, request)
                if not keep_open:
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # close() ends open connections; ending quietly keeps asyncio's stream callback silent
        finally:
            if last is not None:
                last.closed.set()
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._connections.discard(task)

    async def _read_request(self, reader: asyncio.StreamReader) -> RecordedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _version = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
        return RecordedRequest(method, path, headers, body)

    @staticmethod
    def _head(status: int, headers: dict[str, str]) -> bytes:
        lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _reply(
        self, reply: Reply, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: RecordedRequest
    ) -> bool:
        """Writes one response; False when the connection must close after it."""
        request_id = f"req_{uuid.uuid4().hex[:12]}"
        if isinstance(reply, ErrorReply):
            payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            data = payload.encode()
            headers = {
                "content-type": "application/json" if not isinstance(reply.body, str) else "text/plain",
                "content-length": str(len(data)),
                "x-request-id": request_id,
                **reply.headers,
            }
            writer.write(self._head(reply.status, headers) + data)
            await writer.drain()
            return True
        headers = {
            "content-type": "text/event-stream; charset=utf-8",
            "transfer-encoding": "chunked",
            "cache-control": "no-cache",
            "x-request-id": request_id,
            **reply.headers,
        }
        writer.write(self._head(200, headers))
        await writer.drain()
        for sent, event in enumerate(reply.events):
            if reply.disconnect_after is not None and sent >= reply.disconnect_after:
                return False  # no [DONE], no terminating chunk
            if reply.hang_after is not None and sent >= reply.hang_after:
                await self._hang(reader)
                return False
            if reply.delay:
                await asyncio.sleep(reply.delay)
            self._write_chunk(writer, f"data: {event if isinstance(event, str) else json.dumps(event)}\n\n")
            await writer.drain()
        if reply.disconnect_after is not None and len(reply.events) >= reply.disconnect_after:
            return False
        if reply.hang_after is not None:
            await self._hang(reader)
            return False
        if reply.done:
            self._write_chunk(writer, "data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    @staticmethod
    def _write_chunk(writer: asyncio.StreamWriter, text: str) -> None:
        data = text.encode()
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    @staticmethod
    async def _hang(reader: asyncio.StreamReader) -> None:
        """Waits until the client closes the connection (EOF), or a safety limit."""
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(HANG_LIMIT_SECONDS):
                while await reader.read(65536):
                    pass
