"""Execution options of a run (mirrors agentd.v1.ExecutionOptions).

`None` means unset everywhere: an unset field falls back to the agent's
`default_options`, then to the runtime's default.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

JSON = Any
DEFAULT_MAX_STEPS = 5


@dataclass(frozen=True, slots=True)
class ToolChoice:
    """Whether the model may, must or must not call tools (`tool`: only `tool_name`)."""

    mode: Literal["auto", "none", "required", "tool"] = "auto"
    tool_name: str | None = None


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """The sampling settings passed to the model; None leaves the provider's default."""

    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_output_tokens: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    stop_sequences: tuple[str, ...] = ()
    seed: int | None = None


StructuredErrorStrategy = Literal["strict", "warn", "fallback"]
STRUCTURED_ERROR_STRATEGIES: tuple[StructuredErrorStrategy, ...] = ("strict", "warn", "fallback")


@dataclass(frozen=True, slots=True)
class StructuredOutput:
    """A JSON object the run answers with (`RunResult.object`, and the last
    assistant message's `metadata["structuredOutput"]`).

    Without `model` the agent's model is sent the schema and answers with the
    JSON; with `model` it answers in text (with its tools) and that model,
    told `instructions`, turns the run's answer into the object. An answer
    that is not JSON matching the schema, or that was cut short: `strict`
    (Mastra's default) fails the run, `warn` ends it with no object and a
    warning, `fallback` ends it with `fallback_value`."""

    schema: dict[str, JSON]
    name: str | None = None
    description: str | None = None
    error_strategy: StructuredErrorStrategy = "strict"
    fallback_value: JSON = None
    model: str | None = None
    instructions: str | None = None

    def __post_init__(self) -> None:
        if self.error_strategy not in STRUCTURED_ERROR_STRATEGIES:
            raise ValueError(f"error_strategy must be one of {', '.join(STRUCTURED_ERROR_STRATEGIES)}")


@dataclass(frozen=True, slots=True)
class ClientTool:
    """A tool the caller declares and runs itself, offered to the model."""

    name: str
    description: str = ""
    input_schema: dict[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """The thread a run reads and writes, with the title and metadata it is created with."""

    id: str
    title: str | None = None
    metadata: dict[str, JSON] | None = None


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    """Which resource and thread the run's memory is."""

    resource: str | None = None
    thread: ThreadRef | None = None


#: Marker for an explicitly unscoped response-cache entry (scope: null).
NO_SCOPE: Literal["<no-scope>"] = "<no-scope>"

#: Per-call scoring (ExecutionOptions.scorers).
ScoringMode = Literal["off", "force"]


@dataclass(frozen=True, slots=True)
class ResponseCacheOptions:
    """A call's response-cache settings: its key, its scope, and whether to bust the entry."""

    key: str | None = None
    scope: str | None = None  # a scope, NO_SCOPE, or None (unset)
    bust: bool | None = None

    def as_context(self) -> dict[str, Any]:
        """The request-context form the ResponseCache processor reads: only the
        fields that are set; `"scope": None` means explicitly unscoped."""
        out: dict[str, Any] = {}
        if self.key is not None:
            out["key"] = self.key
        if self.scope is not None:
            out["scope"] = None if self.scope == NO_SCOPE else self.scope
        if self.bust is not None:
            out["bust"] = self.bust
        return out


@dataclass(frozen=True, slots=True)
class ProcessorSpec:
    """A processor by its registered name, with its id and options."""

    name: str
    id: str | None = None
    options: dict[str, JSON] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ParallelStep:
    """A processor workflow step running its branches on the same input."""

    branches: tuple[ProcessorSpec, ...]


@dataclass(frozen=True, slots=True)
class MapStep:
    """A processor workflow step keeping one branch's output (`select`)."""

    select: str


@dataclass(frozen=True, slots=True)
class ProcessorWorkflowSpec:
    """Processors run as a workflow: its steps in order."""

    id: str
    steps: tuple[ProcessorSpec | ParallelStep | MapStep, ...]


ProcessorRef = ProcessorSpec | ProcessorWorkflowSpec


@dataclass(frozen=True, slots=True)
class ToolHooks:
    """Around every tool call. `before_tool_call(ctx)` may return
    `{"proceed": False, "output": x}` to skip the tool and use `x` as its result;
    `after_tool_call(ctx)` sees `output` or `error`. Per-call hooks replace the
    agent's hook of the same name."""

    before_tool_call: Any = None
    after_tool_call: Any = None


@dataclass(frozen=True, slots=True)
class ExecutionOptions:
    """A run's options; each unset field takes the agent's default."""

    max_steps: int | None = None
    tool_choice: ToolChoice | None = None
    active_tools: tuple[str, ...] | None = None
    model_settings: ModelSettings | None = None
    provider_options: dict[str, JSON] | None = None
    structured_output: StructuredOutput | None = None
    client_tools: tuple[ClientTool, ...] | None = None
    request_context: dict[str, JSON] | None = None
    memory: MemoryOptions | None = None
    response_cache: ResponseCacheOptions | None = None
    #: Per-call processor lists (Processor or ProcessorWorkflow instances):
    #: they replace the agent's; an empty tuple means none.
    input_processors: tuple[Any, ...] | None = None
    output_processors: tuple[Any, ...] | None = None
    #: Replaces the agent's resolved error list, defaults included.
    error_processors: tuple[Any, ...] | None = None
    max_processor_retries: int | None = None
    error_processor_defaults: bool | None = None
    #: `prepare_step(ProcessInputStepArgs)`: process_input_step as a callback.
    prepare_step: Any = None
    #: An aborted thread-bound run saves its input and the assistant text
    #: streamed so far (nothing when there is none); a no-op without memory.
    persist_partial_on_abort: bool | None = None
    #: Per-call scoring: "off" (no scorer scores the run) or "force" (every
    #: scorer does, whatever its sampling rate); None: each scorer samples.
    scorers: ScoringMode | None = None
    hooks: ToolHooks | None = None

    def merged_over(self, defaults: ExecutionOptions | None) -> ExecutionOptions:
        """These options, with every unset field taken from `defaults`."""
        if defaults is None:
            return self
        changes = {
            f.name: getattr(defaults, f.name)
            for f in fields(self)
            if getattr(self, f.name) is None and getattr(defaults, f.name) is not None
        }
        return replace(self, **changes) if changes else self

    @property
    def effective_max_steps(self) -> int:
        return self.max_steps if self.max_steps is not None else DEFAULT_MAX_STEPS
