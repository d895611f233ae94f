"""Gemini SDK and transport failures as ModelAPIErrors.

Every failure is a ModelAPIError: an API error keeps its HTTP code
(`status_code`), status name (`provider_code`, e.g. RESOURCE_EXHAUSTED),
message and JSON body (`details["body"]`); 408, 429 and 5xx are retryable; a
RetryInfo delay or Retry-After header becomes `details["retry_after_ms"]`.
Connection failures, a stream cut mid-way and unparsable stream data are
retryable without a status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from google.genai import errors as genai_errors

from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.common import json_value

#: Exceptions from these packages are transport failures (connection, TLS,
#: a stream cut mid-way), whichever HTTP client library the SDK picked.
_TRANSPORT_PACKAGES = frozenset({"aiohttp", "httpx", "httpx2", "httpcore", "httpcore2", "h11", "anyio"})
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def is_transport_error(exc: BaseException) -> bool:
    """A connection, TLS or cut-stream failure, whichever HTTP library the SDK picked."""
    if isinstance(exc, (OSError, TimeoutError, EOFError)):
        return True
    return any(cls.__module__.split(".")[0] in _TRANSPORT_PACKAGES for cls in type(exc).__mro__)


def _retry_after_ms(body: Any, headers: Mapping[str, str]) -> float | None:
    """The wait the API asks for: a RetryInfo detail's retryDelay ("30s"), or Retry-After."""
    error = body.get("error") if isinstance(body, dict) else None
    error_details = error.get("details") if isinstance(error, dict) else None
    for detail in error_details if isinstance(error_details, list) else ():
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match is not None:
                return float(match.group(1)) * 1000
    retry_after = headers.get("retry-after")
    if retry_after is not None:
        try:
            return float(retry_after) * 1000
        except ValueError:
            return None
    return None


def api_error(exc: genai_errors.APIError) -> ModelAPIError:
    code = exc.code if isinstance(exc.code, int) and not isinstance(exc.code, bool) else None
    status = exc.status if isinstance(exc.status, str) and exc.status else None
    message = exc.message if isinstance(exc.message, str) and exc.message else str(exc)
    raw_headers = getattr(getattr(exc, "response", None), "headers", None)
    headers = {str(k).lower(): str(v) for k, v in raw_headers.items()} if isinstance(raw_headers, Mapping) else {}
    body = exc.details if isinstance(exc.details, dict) else {"error": exc.details}
    details: dict[str, Any] = {"body": json_value(body)}
    wait = _retry_after_ms(body, headers)
    if wait is not None:
        details["retry_after_ms"] = wait
    return ModelAPIError(
        message,
        status_code=code,
        provider_code=status,
        retryable=code is not None and (code in (408, 429) or 500 <= code <= 599),
        details=details,
    )


def unreadable_stream(exc: genai_errors.UnknownApiResponseError) -> ModelAPIError:
    return ModelAPIError(
        f"the Gemini API sent unreadable stream data: {exc}", retryable=True, details={"cause": "bad_response"}
    )


def transport_error(exc: BaseException) -> ModelAPIError:
    return ModelAPIError(
        f"the connection to the Gemini API failed: {type(exc).__name__}: {exc}",
        retryable=True,
        details={"cause": type(exc).__name__},
    )
