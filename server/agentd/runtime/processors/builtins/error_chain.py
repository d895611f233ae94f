"""Reading provider errors: the cause chain, status codes, provider codes and texts.

Shared by the default error processors. `ModelAPIError` is the one typed
provider error; anything else is inspected through duck-typed attributes
(`status_code`/`status`, a string `code`, `errno`) so wrapped client errors
are understood too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from agentd.runtime.models.base import ModelAPIError

#: Keys of error details that hold provider codes or error types.
_CODE_KEYS = ("code", "type", "error_code", "errorCode", "error_type", "errorType")
#: Keys of error details that hold a raw provider response body (JSON text).
_BODY_KEYS = ("response_body", "responseBody", "body")
#: Keys of error details that hold human-readable messages.
_MESSAGE_KEYS = ("message", "error_message", "errorMessage", "detail")
_MAX_DETAIL_DEPTH = 5


def iter_error_chain(error: BaseException, *, max_depth: int | None = None) -> Iterator[BaseException]:
    """`error`, then what it wraps: `__cause__`, `__context__` and the members
    of exception groups, breadth first, each exception once (cycle-safe).
    `max_depth` limits how many links away from `error` the walk goes (0: only
    `error`)."""
    seen: set[int] = set()
    frontier: list[BaseException] = [error]
    depth = 0
    while frontier:
        following: list[BaseException] = []
        for exc in frontier:
            if id(exc) in seen:
                continue
            seen.add(id(exc))
            yield exc
            linked: list[BaseException | None] = [exc.__cause__, exc.__context__]
            if isinstance(exc, BaseExceptionGroup):
                linked.extend(exc.exceptions)
            following.extend(e for e in linked if e is not None and id(e) not in seen)
        depth += 1
        if max_depth is not None and depth > max_depth:
            return
        frontier = following


def status_of(error: BaseException) -> int | None:
    """The HTTP status an error carries, if any."""
    for attr in ("status_code", "status"):
        value = getattr(error, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def details_of(error: BaseException) -> dict[str, Any]:
    details = getattr(error, "details", None)
    return details if isinstance(details, dict) else {}


def _parsed_body(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return None


def _walk_details(value: Any, keys: tuple[str, ...], depth: int = 0) -> Iterator[str]:
    """String values under `keys` anywhere in nested details (JSON bodies parsed)."""
    if depth > _MAX_DETAIL_DEPTH:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if key in keys and isinstance(item, str):
                yield item
            elif key in _BODY_KEYS and isinstance(item, (str, bytes, bytearray)):
                parsed = _parsed_body(item)
                if parsed is not None:
                    yield from _walk_details(parsed, keys, depth + 1)
            elif isinstance(item, (dict, list)):
                yield from _walk_details(item, keys, depth + 1)
    elif isinstance(value, list):
        for item in value:
            yield from _walk_details(item, keys, depth + 1)


def codes_of(error: BaseException) -> list[str]:
    """Provider codes/types of one error (not its chain), lower-cased."""
    codes: list[str] = []
    if isinstance(error, ModelAPIError) and error.provider_code:
        codes.append(error.provider_code)
    code = getattr(error, "code", None)
    if isinstance(code, str):
        codes.append(code)
    codes.extend(_walk_details(details_of(error), _CODE_KEYS))
    return [c.lower() for c in codes if c]


def texts_of(error: BaseException) -> list[str]:
    """Everything human-readable one error (not its chain) says: its message,
    messages inside its details and its raw response body."""
    texts = [str(error)]
    message = getattr(error, "message", None)
    if isinstance(message, str) and message not in texts:
        texts.append(message)
    details = details_of(error)
    texts.extend(_walk_details(details, _MESSAGE_KEYS))
    for key in _BODY_KEYS:
        body = details.get(key)
        if isinstance(body, (bytes, bytearray)):
            body = body.decode("utf-8", "replace")
        if isinstance(body, str) and body:
            texts.append(body)
    return [t for t in texts if t]


def chain_texts(error: BaseException, *, max_depth: int | None = None) -> list[str]:
    """`texts_of` for every error of the chain."""
    return [t for exc in iter_error_chain(error, max_depth=max_depth) for t in texts_of(exc)]
