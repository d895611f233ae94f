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
connection before the reply was complete. Replies, their pacing
(`disconnect_after`, `hang_after`, `end_after`, `delay`) and the HTTP
plumbing are fakes.base's.

    async with AnthropicServer() as server:
        server.push(text_reply("Hel", "lo"), error_reply(529))
        ...  # point the SDK at server.base_url
        assert server.requests[0].body["messages"][0]["role"] == "user"
"""

from __future__ import annotations

import json
from typing import Any

from fakes.base import ErrorReply, FakeProviderServer, RecordedRequest, StreamReply, sse

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
    message: dict[str, Any] = {
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
) -> StreamReply[Event]:
    """A whole message: message_start, a ping, the blocks, message_delta with the
    stop reason and usage, message_stop."""
    events: list[Event] = [message_start(input_tokens, cache_read=cache_read, cache_creation=cache_creation), ping()]
    for block in blocks:
        events.extend(block)
    events.append(message_delta(stop_reason, output_tokens, thinking_tokens=thinking_tokens))
    events.append(message_stop())
    return StreamReply(events, **stream)


def text_reply(*pieces: str, **options: Any) -> StreamReply[Event]:
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


class AnthropicServer(FakeProviderServer[Event]):
    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self.default = error_reply(500, "the fake server has no reply programmed for this request")

    def pick(self, request: RecordedRequest) -> StreamReply[Event] | ErrorReply:
        if request.method != "POST" or request.path != "/v1/messages":
            return error_reply(404, f"no route for {request.method} {request.path}")
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            return error_reply(401, "an API key is required (x-api-key or authorization header)")
        return self.next_reply()

    def encode(self, event: Event) -> bytes:
        kind, data = event
        return sse(json.dumps(data, separators=(",", ":")), kind)

    def extra_headers(self, kind: str) -> list[tuple[str, str]]:
        return [("request-id", "req_fake_stream" if kind == "stream" else "req_fake_error")]

    def default_error_body(self, reply: ErrorReply) -> dict[str, Any]:
        return error_body(reply.status)
