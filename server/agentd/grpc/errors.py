"""gRPC statuses for runtime errors: a google.rpc.Status with one ErrorInfo
(domain "agentd") and, for invalid requests, BadRequest field violations."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from agentd.runtime.errors import BACKEND_RETRY_SECONDS, AgentdError, Unavailable
from agentd.runtime.identity import SEPARATOR
from agentd.runtime.redact import redact, redact_mapping

DOMAIN = "agentd"
#: A scoped id's tenant part (runtime.identity), wherever it appears in text.
_SCOPE = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}(?:" + SEPARATOR + r"|\\x1f)")  # also as repr() writes it
DETAILS_KEY = "grpc-status-details-bin"
#: How long a bidirectional call refused before it was read waits for the caller's first frame.
FIRST_FRAME_WAIT = 0.5
#: The servicer context, parametrised for the type checker.
Context = grpc.aio.ServicerContext[Any, Any]


def to_rpc_status(err: AgentdError) -> status_pb2.Status:
    code = grpc.StatusCode[err.status]
    # Secrets redacted, and ids as their tenant knows them (a scoped id names its tenant).
    status = status_pb2.Status(code=code.value[0], message=_unscope(redact(err.message)))
    metadata = {k: _unscope(v) for k, v in redact_mapping(err.metadata).items()}
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=err.reason, domain=DOMAIN, metadata=metadata))
    status.details.append(info)
    if err.violations:
        bad = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=_unscope(v.description))
                for v in err.violations
            ]
        )
        detail = any_pb2.Any()
        detail.Pack(bad)
        status.details.append(detail)
    if err.retry_after is not None:
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromTimedelta(timedelta(seconds=err.retry_after))
        detail = any_pb2.Any()
        detail.Pack(retry)
        status.details.append(detail)
    return status


async def after_first_frame(requests: AsyncIterator[Any]) -> None:
    """Waits up to FIRST_FRAME_WAIT for a bidirectional caller's first frame, for
    a refusal (no credentials, too many streams) to go out after it. A grpc-python
    aio client that writes as the call ends has its status replaced by INTERNAL
    (grpc/grpc#36066), or its write fails as already finished: one that opens a
    stream and writes at once would see that in place of why it was refused."""
    with contextlib.suppress(Exception):  # ended, broken or silent: the refusal goes out as it is
        await asyncio.wait_for(anext(aiter(requests)), FIRST_FRAME_WAIT)


async def abort(context: Context, err: AgentdError) -> NoReturn:
    status = to_rpc_status(err)
    await context.abort(
        grpc.StatusCode[err.status],
        status.message,
        trailing_metadata=((DETAILS_KEY, status.SerializeToString()),),
    )
    raise AssertionError("unreachable")  # context.abort raises


def _unscope(text: str) -> str:
    """Error text with scoped ids (`<tenant>\x1f<id>`) as their tenant knows them."""
    return _SCOPE.sub("", text) if SEPARATOR in text or "\\x1f" in text else text


@contextmanager
def unavailable_on(error: type[Exception], backend: str, reason: str) -> Iterator[None]:
    """A failing backend (`error`) answers UNAVAILABLE with `reason`, and when to retry."""
    try:
        yield
    except error as exc:
        raise Unavailable(f"the {backend} backend failed: {exc}", reason, retry_after=BACKEND_RETRY_SECONDS) from exc
