"""Errors the runtime raises for callers' mistakes and unmet conditions.

Each carries a canonical status name and an UPPER_SNAKE reason from the
contract's list (protos/agentd/v1/README.md); the transport maps them to gRPC
statuses with an ErrorInfo (and BadRequest field violations), without the
runtime importing grpc.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """A request field that is wrong, and why."""

    field: str
    description: str


@dataclass(eq=False)
class AgentdError(Exception):
    """An error a caller is told about: its message, machine-readable reason and details."""

    message: str
    reason: str
    metadata: dict[str, str] = field(default_factory=dict)
    violations: list[FieldViolation] = field(default_factory=list)
    #: Seconds the caller should wait before trying again (RetryInfo on the wire).
    retry_after: float | None = None
    #: Canonical status name (grpc.StatusCode member name).
    status = "INTERNAL"

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


class InvalidArgument(AgentdError):
    status = "INVALID_ARGUMENT"

    @classmethod
    def fields(cls, violations: list[FieldViolation], reason: str = "INVALID_REQUEST") -> InvalidArgument:
        summary = "; ".join(f"{v.field}: {v.description}" for v in violations)
        return cls(f"invalid request: {summary}", reason, violations=violations)

    @classmethod
    def field(cls, name: str, description: str, reason: str = "INVALID_REQUEST") -> InvalidArgument:
        return cls.fields([FieldViolation(name, description)], reason)


class NotFound(AgentdError):
    status = "NOT_FOUND"


class AlreadyExists(AgentdError):
    status = "ALREADY_EXISTS"


class FailedPrecondition(AgentdError):
    status = "FAILED_PRECONDITION"


class OutOfRange(AgentdError):
    status = "OUT_OF_RANGE"


class Unavailable(AgentdError):
    status = "UNAVAILABLE"


class Unimplemented(AgentdError):
    status = "UNIMPLEMENTED"


class ResourceExhausted(AgentdError):
    status = "RESOURCE_EXHAUSTED"


class DeadlineExceeded(AgentdError):
    status = "DEADLINE_EXCEEDED"


class Unauthenticated(AgentdError):
    status = "UNAUTHENTICATED"


class PermissionDenied(AgentdError):
    status = "PERMISSION_DENIED"


#: How long a caller should wait before retrying when a backend is down.
BACKEND_RETRY_SECONDS = 1.0


def storage_unavailable(error: Exception) -> Unavailable:
    """A storage backend failure, as the caller sees it: retry later."""
    return Unavailable(f"the storage backend failed: {error}", "STORAGE_UNAVAILABLE", retry_after=BACKEND_RETRY_SECONDS)


def agent_not_found(agent_id: str) -> NotFound:
    return NotFound(f"agent {agent_id!r} not found", "AGENT_NOT_FOUND", {"agent_id": agent_id})
