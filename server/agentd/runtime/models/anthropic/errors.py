"""Anthropic SDK and transport failures as ModelAPIErrors.

HTTP errors carry the status, the body's `error.type` as provider code, its
message, and are retryable for 408, 409, 429 and 5xx (529 overloaded
included) unless the provider's `x-should-retry` header says otherwise;
`retry-after` headers are kept in `details["headers"]`. An `error` event in
the middle of a stream is mapped by its type to the status the provider uses
for it (e.g. overloaded_error → 529) and is retryable unless it names a
client error. Timeouts (`timeout`), connection failures and a stream cut
short (`connection_error`) are retryable.
"""

from __future__ import annotations

from typing import Any

import anthropic

from agentd.runtime.models.anthropic.request import PROVIDER
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.common import retryable_status

#: The HTTP status the provider uses for each error type (for `error` events mid-stream).
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_KEPT_HEADERS = ("retry-after", "retry-after-ms", "request-id", "x-should-retry")


def connection_lost(message: str, code: str = "connection_error", **details: Any) -> ModelAPIError:
    """A retryable failure of the connection: timed out (`timeout`), refused or cut short."""
    return ModelAPIError(message, provider_code=code, retryable=True, details={"provider": PROVIDER, **details})


def read_error(exc: Exception) -> ModelAPIError:
    """The error for a failure while the stream was read."""
    return api_error(exc) if isinstance(exc, anthropic.APIError) else transport_error(exc)


def api_error(exc: anthropic.APIError) -> ModelAPIError:
    """The one typed error for an SDK error."""
    if isinstance(exc, anthropic.APITimeoutError):
        return connection_lost(f"{PROVIDER} request timed out: {exc.message}", "timeout")
    if isinstance(exc, anthropic.APIConnectionError):
        return connection_lost(f"{PROVIDER} connection failed: {exc.message}")
    body = exc.body
    error = body.get("error") if isinstance(body, dict) else None
    error_type = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    details: dict[str, Any] = {"provider": PROVIDER}
    if isinstance(body, (dict, str)):
        details["body"] = body
    if not isinstance(exc, anthropic.APIStatusError):
        return ModelAPIError(
            str(message or exc.message),
            provider_code=str(error_type) if error_type else None,
            retryable=False,
            details=details,
        )
    status: int | None = exc.status_code
    headers = {name: exc.response.headers[name] for name in _KEPT_HEADERS if name in exc.response.headers}
    if headers:
        details["headers"] = headers
    request_id = headers.get("request-id") or (body.get("request_id") if isinstance(body, dict) else None)
    if request_id:
        details["requestId"] = request_id
    error_code = getattr(exc, "error_code", None)
    if isinstance(error_code, str):
        details["errorCode"] = error_code
    if status is not None and status < 400:
        # An `error` event inside a stream that had started fine (HTTP 200).
        details["midStream"] = True
        details["httpStatus"] = status
        status = _ERROR_TYPE_STATUS.get(str(error_type)) if error_type else None
        retryable = status is None or retryable_status(status)
    else:
        retryable = retryable_status(exc.status_code, headers.get("x-should-retry"))
    return ModelAPIError(
        str(message or exc.message),
        status_code=status,
        provider_code=str(error_type) if error_type else None,
        retryable=retryable,
        details=details,
    )


def transport_error(exc: Exception) -> ModelAPIError:
    """A failure below the SDK while the stream was read (a dropped or timed-out connection)."""
    name = type(exc).__name__
    timed_out = isinstance(exc, TimeoutError) or "timeout" in name.lower()
    return connection_lost(
        f"{PROVIDER} stream {'timed out' if timed_out else 'broke'}: {name}: {exc}",
        "timeout" if timed_out else "connection_error",
        exception=name,
    )
