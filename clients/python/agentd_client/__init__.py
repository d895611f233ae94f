"""An asyncio client for agentd, the agent runtime served over gRPC.

    from agentd_client import AgentdClient, AgentdError

    async with AgentdClient("127.0.0.1:50051") as client:
        result = await client.generate("echo", "hello")
        print(result.text, result.finish_reason)

    # A server with [auth] and [server.tls]: a bearer token ($AGENTD_TOKEN
    # when none is given) and the CA that signed the server's certificate.
    AgentdClient("agentd.internal:443", token="agentd_...", tls=TLS(ca_file="ca.pem"))

Messages and chunks are the contract's protobuf types (`agentd_proto.v1`).
"""

from ._values import from_struct, from_value, to_struct, to_value
from .client import AgentdClient
from .credentials import TLS, TOKEN_ENV
from .errors import AgentdError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError
from .options import ResponseCache, execution_options
from .overrides import KEEP
from .session import ClientTool, ConnectSession
from .streams import RunStream, Subscription
from .types import (
    CacheEntry,
    CacheStats,
    GenerateResult,
    NotificationResult,
    Pager,
    Routing,
    assistant,
    chunk_kind,
    finish_reason_name,
    first_text,
    is_terminal,
    joined_text,
    message,
    system,
    user,
)

__all__ = [
    "KEEP",
    "TLS",
    "TOKEN_ENV",
    "AgentdClient",
    "AgentdError",
    "CacheEntry",
    "CacheStats",
    "ClientTool",
    "ConnectSession",
    "GenerateResult",
    "NotificationResult",
    "Pager",
    "PermissionDeniedError",
    "ResourceExhaustedError",
    "ResponseCache",
    "Routing",
    "RunStream",
    "Subscription",
    "UnauthenticatedError",
    "assistant",
    "chunk_kind",
    "execution_options",
    "finish_reason_name",
    "first_text",
    "from_struct",
    "from_value",
    "is_terminal",
    "joined_text",
    "message",
    "system",
    "to_struct",
    "to_value",
    "user",
]
__version__ = "0.1.0"
