"""agentd's agent runtime, usable without gRPC: `from agentd.runtime import Agent`."""

from agentd.runtime.agent import Agent, RunInput, resolve_dynamic
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
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.run import RunHandle, RunResult, StepResult
from agentd.runtime.run_requests import RunRequest, start_run
from agentd.runtime.state_signals import StateSignalRequest, StateSignalResult, send_state_signal
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
    "RunRequest",
    "RunResult",
    "SignalPart",
    "StateSignalRequest",
    "StateSignalResult",
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
    "send_state_signal",
    "start_run",
    "tool",
]
