"""agentd's agent runtime, usable without gRPC: `from agentd.runtime import Agent`."""

from agentd.runtime.agent import Agent, RunHandle, RunInput, resolve_dynamic
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.chunks import Chunk, Tripwire, Usage
from agentd.runtime.errors import (
    AgentdError,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agentd.runtime.models.base import LanguageModel, ModelAPIError, ModelRequest
from agentd.runtime.models.router import resolve_model
from agentd.runtime.options import ExecutionOptions, MemoryOptions, ModelSettings, ThreadRef, ToolChoice

# The default error lane's processors register themselves with the runtime
# (agentd.runtime.lanes) when imported: importing the runtime registers them.
from agentd.runtime.processors.builtins import error_defaults as _error_defaults  # noqa: F401
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.results import RunResult, StepResult
from agentd.runtime.tools import Tool, ToolContext, tool

__all__ = [
    "Agent",
    "AgentRegistry",
    "AgentdError",
    "Chunk",
    "ChunkBuffer",
    "DataPart",
    "ExecutionOptions",
    "FailedPrecondition",
    "FieldViolation",
    "FilePart",
    "InvalidArgument",
    "LanguageModel",
    "MemoryOptions",
    "Message",
    "ModelAPIError",
    "ModelRequest",
    "ModelSettings",
    "NotFound",
    "ReasoningPart",
    "RunHandle",
    "RunInput",
    "RunRegistry",
    "RunResult",
    "SignalPart",
    "StepResult",
    "TextPart",
    "ThreadRef",
    "Tool",
    "ToolCallPart",
    "ToolChoice",
    "ToolContext",
    "ToolResultPart",
    "Tripwire",
    "Unavailable",
    "Usage",
    "resolve_dynamic",
    "resolve_model",
    "tool",
]
