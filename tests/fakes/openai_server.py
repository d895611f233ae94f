"""A local HTTP/1.1 server speaking OpenAI's Chat Completions streaming wire format.

    async with FakeOpenAIServer() as server:
        server.push(text_reply("Hel", "lo"), ErrorReply(500, error_body("boom", "server_error")))
        ... point the SDK at server.base_url ...
        server.requests[0].body            # each request's JSON body, in arrival order
        await server.requests[0].closed.wait()   # the client closed that connection

Each POST takes the next pushed reply (an unscripted request gets a 500):

* `SSEReply(events)`: 200 `text/event-stream`, chunked, one `data: {json}\\n\\n`
  event per entry, then `data: [DONE]\\n\\n` (as the provider documents it);
  the pacing options (`disconnect_after`, `hang_after`, `delay`, ...) are
  fakes.base's: a cut stream sends no [DONE].
* `ErrorReply(status, body, headers)`: a JSON error body such as
  `{"error": {"message", "type", "param", "code"}}`; every reply carries an
  `x-request-id`.

Builders for the chunks: `chunk`, `text_chunks`, `tool_call_chunks`,
`usage_chunk`, `text_reply`, `tool_reply`, `error_body`.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from fakes.base import ErrorReply, FakeProviderServer, StreamReply, sse

MODEL = "gpt-test"

#: One stream entry: a chunk object, or a string sent as the data as it is.
Event = dict[str, Any] | str


@dataclass
class SSEReply(StreamReply[Event]):
    """A chunk stream; `done` ends it with `data: [DONE]` (when it is sent whole)."""

    done: bool = True


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


class FakeOpenAIServer(FakeProviderServer[Event]):
    stream_headers = (
        ("content-type", "text/event-stream; charset=utf-8"),
        ("transfer-encoding", "chunked"),
        ("cache-control", "no-cache"),
    )
    text_type = "text/plain"

    def __init__(self) -> None:
        super().__init__()
        self.default = ErrorReply(500, error_body("unscripted", "test"))

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def encode(self, event: Event) -> bytes:
        return sse(event if isinstance(event, str) else json.dumps(event))

    def closing_events(self, reply: StreamReply[Event]) -> list[bytes]:
        return [sse("[DONE]")] if isinstance(reply, SSEReply) and reply.done else []

    def extra_headers(self, kind: str) -> list[tuple[str, str]]:
        return [("x-request-id", f"req_{uuid.uuid4().hex[:12]}")]
