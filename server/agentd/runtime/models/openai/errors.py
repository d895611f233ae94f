"""OpenAI SDK and transport failures as ModelAPIErrors.

HTTP errors carry the status, the provider code (the error body's `code`,
else its `type`), its message, and `retryable` for 408, 409, 429 and 5xx (an
`x-should-retry` header overrides); `details` holds the error body (`error`),
the request id and `retry_after_ms` from Retry-After/Retry-After-Ms.
Connection failures and timeouts are retryable with no status. An error
event inside the stream is retryable when its code or type names a transient
failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime

import openai

from agentd.runtime.messages import utcnow
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.common import JSONObject, retryable_status

_TRANSIENT_CODE_MARKERS = ("server_error", "rate_limit", "overloaded", "timeout", "unavailable", "internal")
_TRANSPORT_MODULES = ("httpx", "httpcore", "h11", "h2", "anyio")


def converted(exc: Exception) -> Exception:
    """The ModelAPIError for an SDK or transport failure; anything else unchanged."""
    if isinstance(exc, ModelAPIError):
        return exc
    if isinstance(exc, openai.APIStatusError):
        return status_error(exc)
    if isinstance(exc, openai.APITimeoutError):
        return ModelAPIError(f"the request to the openai provider timed out: {exc}", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        reason = f": {cause}" if cause is not None and str(cause) else ""
        return ModelAPIError(f"connection to the openai provider failed{reason}", retryable=True)
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        body = exc.body if isinstance(exc.body, dict) else {}
        code = exc.code or exc.type or None
        retryable = bool(code) and any(marker in str(code).lower() for marker in _TRANSIENT_CODE_MARKERS)
        return ModelAPIError(exc.message, provider_code=code, retryable=retryable, details={"error": body})
    if isinstance(exc, OSError) or type(exc).__module__.split(".", 1)[0] in _TRANSPORT_MODULES:
        return ModelAPIError(f"connection to the openai provider failed: {exc}", retryable=True)
    return exc


def status_error(exc: openai.APIStatusError) -> ModelAPIError:
    status = exc.status_code
    body = exc.body
    error = body if isinstance(body, dict) else {}
    code = error.get("code") or error.get("type")
    message = error.get("message") if isinstance(error.get("message"), str) else None
    details: JSONObject = {}
    if error:
        details["error"] = error
    elif isinstance(body, str) and body:
        details["response_body"] = body
    headers = exc.response.headers
    request_id = headers.get("x-request-id")
    if request_id:
        details["request_id"] = request_id
    delay = retry_after_ms(headers)
    if delay is not None:
        details["retry_after_ms"] = delay
    return ModelAPIError(
        message or exc.message,
        status_code=status,
        provider_code=str(code) if code else None,
        retryable=retryable_status(status, headers.get("x-should-retry")),
        details=details,
    )


def retry_after_ms(headers: Mapping[str, str]) -> float | None:
    """Retry-After-Ms, or Retry-After in seconds or as an HTTP date, in milliseconds."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms))
        except ValueError:
            pass
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    try:
        return max(0.0, float(raw) * 1000)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - utcnow()).total_seconds() * 1000)
