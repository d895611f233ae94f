"""`AgentdError`: every failed call, parsed from agentd's rich gRPC status.

A failed RPC carries a `google.rpc.Status` in the `grpc-status-details-bin`
trailer with one `google.rpc.ErrorInfo` (domain `agentd`, an UPPER_SNAKE
`reason`, `metadata` naming the object) and, for invalid requests, a
`google.rpc.BadRequest` with one field violation per problem; a call to
retry later also carries a `google.rpc.RetryInfo` delay.

The failures of who is calling are subclasses, to catch on their own:
`UnauthenticatedError` (TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED,
CERTIFICATE_UNKNOWN), `PermissionDeniedError` (ROLE_REQUIRED) and
`ResourceExhaustedError` (RATE_LIMITED, with `retry_delay`; TOO_MANY_STREAMS).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

DETAILS_KEY = "grpc-status-details-bin"

_BY_VALUE: dict[int, grpc.StatusCode] = {code.value[0]: code for code in grpc.StatusCode}


def status_code(value: int) -> grpc.StatusCode:
    """The grpc.StatusCode of a numeric code (UNKNOWN for values grpc does not know)."""
    return _BY_VALUE.get(value, grpc.StatusCode.UNKNOWN)


class AgentdError(Exception):
    """A failed agentd call.

    - `code`: the `grpc.StatusCode` (`code_name` is its name, e.g. "NOT_FOUND").
    - `message`: the status message.
    - `reason`: the ErrorInfo reason, e.g. "AGENT_NOT_FOUND" ("" when the
      status carried none, e.g. a transport failure).
    - `metadata`: the ErrorInfo metadata (names the object).
    - `violations`: BadRequest field violations, `{field path: description}`
      (descriptions of one field joined with "; ").
    - `retry_delay`: seconds to wait before trying again (the RetryInfo
      detail), None when the server named none.
    - `details`: the raw `google.protobuf.Any` details.

    `AgentdError.from_status` and `from_rpc_error` return the subclass of
    the code: `UnauthenticatedError`, `PermissionDeniedError`,
    `ResourceExhaustedError`.
    """

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: str = "",
        metadata: Mapping[str, str] | None = None,
        violations: Mapping[str, str] | None = None,
        *,
        domain: str = "",
        details: tuple[any_pb2.Any, ...] = (),
        retry_delay: float | None = None,
    ) -> None:
        super().__init__(code, message, reason)
        self.code = code
        self.message = message
        self.reason = reason
        self.metadata: dict[str, str] = dict(metadata or {})
        self.violations: dict[str, str] = dict(violations or {})
        self.domain = domain
        self.details = details
        self.retry_delay = retry_delay

    @property
    def code_name(self) -> str:
        """The status code's name, e.g. "INVALID_ARGUMENT"."""
        return str(self.code.name)

    @property
    def retryable(self) -> bool:
        """True for UNAVAILABLE (a provider failure marked retryable, shutdown, storage)."""
        return self.code is grpc.StatusCode.UNAVAILABLE

    def __str__(self) -> str:
        text = f"{self.code_name}"
        if self.reason:
            text += f" ({self.reason})"
        text += f": {self.message}"
        if self.violations:
            text += " [" + "; ".join(f"{f}: {d}" for f, d in self.violations.items()) + "]"
        return text

    def __repr__(self) -> str:
        return (
            f"AgentdError(code={self.code_name}, message={self.message!r}, reason={self.reason!r}, "
            f"metadata={self.metadata!r}, violations={self.violations!r})"
        )

    @classmethod
    def from_status(cls, status: status_pb2.Status) -> AgentdError:
        """From a `google.rpc.Status` (the trailer, or a Connect `error` answer)."""
        return _from_status(status, status_code(status.code), status.message)

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> AgentdError:
        """From a failed call; reads the rich status from the trailing metadata."""
        code = grpc.StatusCode.UNKNOWN
        message = str(err)
        trailers: Any = ()
        if isinstance(err, grpc.aio.AioRpcError):
            code, message, trailers = err.code(), err.details() or "", err.trailing_metadata() or ()
        elif isinstance(err, grpc.Call):
            code, message, trailers = err.code(), err.details() or "", err.trailing_metadata() or ()
        for key, value in _items(trailers):
            if key == DETAILS_KEY and isinstance(value, bytes):
                status = status_pb2.Status()
                try:
                    status.ParseFromString(value)
                except Exception:  # a foreign or broken trailer: keep the plain status
                    break
                return _from_status(
                    status, status_code(status.code) if status.code else code, status.message or message
                )
        return error_class(code)(code, message)


class UnauthenticatedError(AgentdError):
    """UNAUTHENTICATED: the call carried no credentials, or none the server
    accepts. `reason`: TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED or
    CERTIFICATE_UNKNOWN."""


class PermissionDeniedError(AgentdError):
    """PERMISSION_DENIED: the caller is known but its role is too weak for
    this call (`reason` ROLE_REQUIRED, `metadata["required_role"]`)."""


class ResourceExhaustedError(AgentdError):
    """RESOURCE_EXHAUSTED: over a limit. RATE_LIMITED (try again after
    `retry_delay` seconds), TOO_MANY_STREAMS (close one first), or a reply
    over the server's message size."""


_CLASSES: dict[grpc.StatusCode, type[AgentdError]] = {
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
}


def error_class(code: grpc.StatusCode) -> type[AgentdError]:
    """The AgentdError subclass failures with `code` are raised as."""
    return _CLASSES.get(code, AgentdError)


def _from_status(status: status_pb2.Status, code: grpc.StatusCode, message: str) -> AgentdError:
    reason, domain = "", ""
    metadata: dict[str, str] = {}
    violations: dict[str, str] = {}
    retry_delay: float | None = None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if not reason:  # the contract sends exactly one
                reason, domain, metadata = info.reason, info.domain, dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            for v in bad.field_violations:
                prior = violations.get(v.field)
                violations[v.field] = v.description if prior is None else f"{prior}; {v.description}"
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            retry_delay = retry.retry_delay.ToTimedelta().total_seconds()
    return error_class(code)(
        code,
        message,
        reason,
        metadata,
        violations,
        domain=domain,
        details=tuple(status.details),
        retry_delay=retry_delay,
    )


def _items(trailers: Any) -> list[tuple[str, Any]]:
    if isinstance(trailers, grpc.aio.Metadata):
        return list(trailers)
    return [(k, v) for k, v in trailers]
