"""agentd's agent runtime, usable without gRPC: `from agentd.runtime import Agent`.

Everything public is re-exported here (the modules below are private):
agents and runs, the processor API (`Processor`, every hook's args
dataclass), models, the host with its thread runtime, signals and errors.
"""

from agentd.runtime.agent import Agent, RunHandle, RunInput, resolve_dynamic
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.cache import InMemoryServerCache, ServerCache
from agentd.runtime.chunks import Chunk, Tripwire, Usage
from agentd.runtime.errors import (
    AgentdError,
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    Unavailable,
)
from agentd.runtime.host import App, Host
from agentd.runtime.mcp_tools import McpServers, McpServerSpec, McpToolRef, McpToolSettings
from agentd.runtime.memory import Memory
from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    ReasoningPart,
    Signal,
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
    ProcessorUnavailable,
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
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd.runtime.processors.builtins.token_cost_control import TokenCostControl
from agentd.runtime.processors.builtins.tool_search import ToolSearchFilterArgs, ToolSearchProcessor
from agentd.runtime.processors.factory import dataclass_from_options, from_options, snake
from agentd.runtime.registry import AgentRegistry, RunRegistry
from agentd.runtime.results import RunResult, StepResult
from agentd.runtime.run_requests import RunRequest, start_run
from agentd.runtime.scoring.builtins import build_scorer
from agentd.runtime.scoring.record import Score, ScorePage, ScoreQuery
from agentd.runtime.scoring.scorer import ScoreInput, Scorer, ScoreResult, judge_scorer
from agentd.runtime.scoring.service import Scoring, ScoringSettings
from agentd.runtime.scoring.store import InMemoryScoreStore, ScoreStore
from agentd.runtime.signals import create_message_signal, create_signal
from agentd.runtime.state_signals import StateSignalRequest, StateSignalResult, send_state_signal
from agentd.runtime.storage import InMemoryStorage, Storage, Thread
from agentd.runtime.threads import RouteRequest, Routing, ThreadRuntime, ThreadSettings
from agentd.runtime.tool_payloads import (
    PayloadRule,
    ToolPayloadContext,
    ToolPayloadTransform,
    ToolPayloadTransformPolicy,
)
from agentd.runtime.tools import Tool, ToolContext, ToolSource, tool
from agentd.runtime.workflows import Branch, FieldTest, Parallel, Sequential, Step, Workflow, WorkflowLimits

__all__ = [
    "APIErrorResult",
    "Agent",
    "AgentRegistry",
    "AgentdError",
    "App",
    "Branch",
    "CachedLLMResponse",
    "Chunk",
    "ChunkBuffer",
    "DataPart",
    "ExecutionOptions",
    "FailedPrecondition",
    "FieldTest",
    "FieldViolation",
    "FilePart",
    "HookArgs",
    "Host",
    "InMemoryScoreStore",
    "InMemoryServerCache",
    "InMemoryStorage",
    "InvalidArgument",
    "LLMRequestResult",
    "LanguageModel",
    "McpServerSpec",
    "McpServers",
    "McpToolRef",
    "McpToolSettings",
    "Memory",
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
    "Parallel",
    "PayloadRule",
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
    "ProcessorUnavailable",
    "ProcessorViolation",
    "ReasoningPart",
    "ResponseCache",
    "RouteRequest",
    "Routing",
    "RunHandle",
    "RunInput",
    "RunRegistry",
    "RunRequest",
    "RunResult",
    "Score",
    "ScoreInput",
    "ScorePage",
    "ScoreQuery",
    "ScoreResult",
    "ScoreStore",
    "Scorer",
    "Scoring",
    "ScoringSettings",
    "Sequential",
    "ServerCache",
    "Signal",
    "SignalPart",
    "StateSignalRequest",
    "StateSignalResult",
    "Step",
    "StepOverrides",
    "StepResult",
    "Storage",
    "TextPart",
    "Thread",
    "ThreadRef",
    "ThreadRuntime",
    "ThreadSettings",
    "TokenCostControl",
    "Tool",
    "ToolCallPart",
    "ToolChoice",
    "ToolContext",
    "ToolPayloadContext",
    "ToolPayloadTransform",
    "ToolPayloadTransformPolicy",
    "ToolResultPart",
    "ToolSearchFilterArgs",
    "ToolSearchProcessor",
    "ToolSource",
    "TripWire",
    "Tripwire",
    "Unavailable",
    "Usage",
    "Workflow",
    "WorkflowLimits",
    "build_scorer",
    "create_message_signal",
    "create_signal",
    "dataclass_from_options",
    "from_options",
    "judge_scorer",
    "register_provider",
    "resolve_dynamic",
    "resolve_model",
    "send_state_signal",
    "snake",
    "start_run",
    "tool",
]
