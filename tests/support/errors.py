"""Helpers for reading agentd's rich errors in tests: one decoder of the
status details (ErrorInfo, BadRequest, RetryInfo) for every folder."""

from __future__ import annotations

from dataclasses import dataclass, field

import grpc
from google.rpc import error_details_pb2, status_pb2


@dataclass
class RichError:
    code: grpc.StatusCode
    message: str
    reason: str = ""
    domain: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    violations: dict[str, str] = field(default_factory=dict)
    #: RetryInfo's delay in seconds (None: no RetryInfo).
    retry_delay: float | None = None


def rich_error(err: grpc.aio.AioRpcError | grpc.RpcError) -> RichError:
    """The status, ErrorInfo, BadRequest field violations and RetryInfo of a failed call."""
    out = RichError(err.code(), err.details() or "")
    for key, value in err.trailing_metadata() or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                out.reason, out.domain, out.metadata = info.reason, info.domain, dict(info.metadata)
            elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad = error_details_pb2.BadRequest()
                detail.Unpack(bad)
                out.violations = {v.field: v.description for v in bad.field_violations}
            elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                retry = error_details_pb2.RetryInfo()
                detail.Unpack(retry)
                out.retry_delay = retry.retry_delay.ToTimedelta().total_seconds()
    return out
