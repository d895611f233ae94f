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
A stream reply's `events` are its chunks (each a GenerateContentResponse
dict, or an `{"error": ...}` object sent as an event); replies, their pacing
and the HTTP plumbing are fakes.base's.

    async with GoogleServer() as server:
        server.push(reply_text("Hel", "lo"), error_reply(503))
        ...  # point the SDK at server.base_url
        assert server.requests[0].body["contents"][0]["role"] == "user"
"""

from __future__ import annotations

import json
from typing import Any

from fakes.base import ErrorReply, FakeProviderServer, RecordedRequest, StreamReply, sse

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
) -> StreamReply[dict[str, Any]]:
    """A text answer, one piece per chunk; the last chunk carries the finish
    reason and usage (as the real API sends them)."""
    usage_metadata = usage_metadata if usage_metadata is not None else usage(3, len(pieces))
    chunks = [chunk(text_part(p)) for p in pieces[:-1]]
    last = [text_part(pieces[-1])] if pieces else []
    chunks.append(chunk(*last, finish=finish, usage_metadata=usage_metadata))
    return StreamReply(chunks, **stream)


def reply_calls(*calls: dict[str, Any], usage_metadata: dict[str, Any] | None = None) -> StreamReply[dict[str, Any]]:
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


class GoogleServer(FakeProviderServer[dict[str, Any]]):
    stream_headers = (
        ("Content-Type", "text/event-stream"),
        ("Transfer-Encoding", "chunked"),
        ("Cache-Control", "no-cache"),
    )
    json_type = "application/json; charset=UTF-8"
    text_type = "text/plain; charset=UTF-8"

    def __init__(self, host: str = "127.0.0.1") -> None:
        super().__init__(host)
        self.default = error_reply(500, "the fake server has no reply programmed for this request")

    def pick(self, request: RecordedRequest) -> StreamReply[dict[str, Any]] | ErrorReply:
        if request.method != "POST" or not request.path.endswith(":streamGenerateContent"):
            return error_reply(404, f"no route for {request.method} {request.path}")
        return self.next_reply()

    def encode(self, event: dict[str, Any]) -> bytes:
        return sse(json.dumps(event, separators=(",", ":")))

    def default_error_body(self, reply: ErrorReply) -> dict[str, Any]:
        return error_body(reply.status)
