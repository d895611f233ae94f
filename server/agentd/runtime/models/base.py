"""The model interface the agent loop calls, and what a model call streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol

from agentd.runtime.chunks import FinishReason, Payload, Usage
from agentd.runtime.messages import Message
from agentd.runtime.options import ModelSettings, StructuredOutput, ToolChoice


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """A tool as the model is offered it: its name, description and input schema."""

    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(slots=True)
class ModelRequest:
    """One provider call: the prompt (system messages first) and the step's settings."""

    prompt: list[Message]
    tools: list[ToolDefinition] = field(default_factory=list)
    tool_choice: ToolChoice | None = None
    settings: ModelSettings = field(default_factory=ModelSettings)
    provider_options: dict[str, Any] = field(default_factory=dict)
    structured_output: StructuredOutput | None = None
    step_number: int = 0


@dataclass(slots=True)
class ModelFinish:
    """The last event of a model call (not a chunk: the loop builds step-finish from it)."""

    finish_reason: FinishReason
    usage: Usage
    raw_finish_reason: str | None = None
    provider_metadata: dict[str, Any] | None = None
    type: str = "model-finish"


ModelEvent = Payload | ModelFinish


@dataclass(eq=False, repr=False)
class ModelAPIError(Exception):
    """A provider rejected or broke a call: one typed error for every provider."""

    message: str
    _: KW_ONLY
    status_code: int | None = None
    provider_code: str | None = None
    retryable: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)
        self.details = self.details or {}  # None from an untyped caller is no details


class LanguageModel(Protocol):
    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    @property
    def spec(self) -> str:
        """ "provider/model"."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
