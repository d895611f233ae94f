"""agentd's agent runtime, usable without gRPC: `from agentd.runtime import Agent`.

Processor authors find the processor API here too:
`from agentd.runtime import Processor, ProcessOutputStreamArgs`.
"""

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
from agentd.runtime.models.base import LanguageModel, ModelAPIError, ModelEvent, ModelFinish, ModelRequest
from agentd.runtime.models.router import register_provider, resolve_model
from agentd.runtime.options import ExecutionOptions, MemoryOptions, ModelSettings, ThreadRef, ToolChoice
from agentd.runtime.processors.base import (
    APIErrorResult,
    CachedLLMResponse,
    HookArgs,
    LLMRequestResult,
    ModelCallArgs,
    OutputResult,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    Processor,
    ProcessorViolation,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
    StepOverrides,
    TripWire,
)

# The default error lane's processors register themselves with the runtime
# (agentd.runtime.lanes) when imported: importing the runtime registers them.
from agentd.runtime.processors.builtins import error_defaults as _error_defaults  # noqa: F401
from agentd.runtime.processors.factory import dataclass_from_options, from_options, snake
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.results import RunResult, StepResult
from agentd.runtime.run_requests import RunRequest, start_run
from agentd.runtime.state_signals import StateSignalRequest, StateSignalResult, send_state_signal
from agentd.runtime.tools import Tool, ToolContext, tool

__all__ = [
    "APIErrorResult",
    "Agent",
    "AgentRegistry",
    "AgentdError",
    "CachedLLMResponse",
    "Chunk",
    "ChunkBuffer",
    "DataPart",
    "ExecutionOptions",
    "FailedPrecondition",
    "FieldViolation",
    "FilePart",
    "HookArgs",
    "InvalidArgument",
    "LLMRequestResult",
    "LanguageModel",
    "MemoryOptions",
    "Message",
    "ModelAPIError",
    "ModelCallArgs",
    "ModelEvent",
    "ModelFinish",
    "ModelRequest",
    "ModelSettings",
    "NotFound",
    "OutputResult",
    "ProcessAPIErrorArgs",
    "ProcessInputArgs",
    "ProcessInputStepArgs",
    "ProcessLLMRequestArgs",
    "ProcessLLMResponseArgs",
    "ProcessOutputResultArgs",
    "ProcessOutputStepArgs",
    "ProcessOutputStreamArgs",
    "ProcessToolResultArgs",
    "Processor",
    "ProcessorViolation",
    "ReasoningPart",
    "RunHandle",
    "RunInput",
    "RunRegistry",
    "RunRequest",
    "RunResult",
    "SignalPart",
    "StateSignalRequest",
    "StateSignalResult",
    "StepOverrides",
    "StepResult",
    "TextPart",
    "ThreadRef",
    "Tool",
    "ToolCallPart",
    "ToolChoice",
    "ToolContext",
    "ToolResultPart",
    "TripWire",
    "Tripwire",
    "Unavailable",
    "Usage",
    "dataclass_from_options",
    "from_options",
    "register_provider",
    "resolve_dynamic",
    "resolve_model",
    "send_state_signal",
    "snake",
    "start_run",
    "tool",
]
