"""What a run produces: one StepResult per model call, and the RunResult of
the whole run. Plain data below the loop, so processors can read past steps
without importing the loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.chunks import Abort, Error, Finish, FinishReason, StepFinish, Tripwire, Usage
from agentd.runtime.messages import Message, Part, ReasoningPart, TextPart, ToolCallPart, ToolResultPart


@dataclass(slots=True)
class StepResult:
    """What one step of a run produced."""

    step_number: int
    text: str = ""
    reasoning_text: str = ""
    finish_reason: FinishReason = "unknown"
    raw_finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: list[ToolCallPart] = field(default_factory=list)
    tool_results: list[ToolResultPart] = field(default_factory=list)
    model: str = ""
    tripwire: Tripwire | None = None
    warnings: list[str] = field(default_factory=list)
    from_cache: bool = False
    #: Reasoning blocks with their provider signatures, sent back in later steps.
    reasoning_parts: list[ReasoningPart] = field(default_factory=list)

    def finish_chunk(self, message_id: str, *, continues: bool) -> StepFinish:
        """The step-finish chunk of this step (`continues`: a tool round follows)."""
        return StepFinish(  # (positional: a keyword call into a dataclass __init__ costs more)
            self.step_number,
            message_id,
            self.finish_reason,
            self.usage,
            self.raw_finish_reason,
            continues,
            None,
            self.model,
            self.tripwire,
            self.warnings,
        )

    def assistant_message(self, message_id: str) -> Message:
        """The assistant message of this step: its reasoning, text and tool calls."""
        parts: list[Part] = []
        if self.reasoning_parts:
            parts.extend(self.reasoning_parts)
        elif self.reasoning_text:
            parts.append(ReasoningPart(self.reasoning_text))
        if self.text:
            parts.append(TextPart(self.text))
        if self.tool_calls:
            parts.extend(self.tool_calls)
        return Message("assistant", parts, message_id)


@dataclass(slots=True)
class RunResult:
    """The full output of a run (what Generate returns)."""

    run_id: str
    agent_id: str
    text: str = ""
    reasoning_text: str = ""
    finish_reason: FinishReason = "unknown"
    raw_finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    total_usage: Usage = field(default_factory=Usage)
    steps: list[StepResult] = field(default_factory=list)
    response_messages: list[Message] = field(default_factory=list)
    object: Any = None
    tripwire: Tripwire | None = None
    model: str = ""
    warnings: list[str] = field(default_factory=list)
    thread_id: str | None = None
    resource_id: str | None = None
    #: Set when the run failed (the stream's error chunk).
    error: Error | None = None
    #: Set when the run was aborted (the stream's abort chunk).
    aborted: Abort | None = None
    #: What processors flagged without blocking (processors.base.ProcessorViolation).
    findings: list[Any] = field(default_factory=list)

    @classmethod
    def starting(cls, run_id: str, agent_id: str) -> RunResult:
        """A run's result as the run starts. (Every field positional: a default
        factory is a call in __init__; one zero Usage for both, as no Usage changes in place.)"""
        zero = Usage()
        return cls(
            run_id,
            agent_id,
            "",
            "",
            "unknown",
            None,
            zero,
            zero,
            [],
            [],
            None,
            None,
            "",
            [],
            None,
            None,
            None,
            None,
            [],
        )

    def add_up(self, structuring_usage: Usage | None, response_messages: list[Message]) -> None:
        """Sets what the run says from its steps (a tripped step's text is not
        said) and `response_messages`; `structuring_usage`: a structuring model's,
        part of the total (None: none ran). (One pass over the steps; a lone
        usage is the total as it is, no sum made: none changes a Usage in place.)"""
        steps = self.steps
        text: list[str] = []
        reasoning: list[str] = []
        total = structuring_usage
        for step in steps:
            if step.tripwire is None:
                text.append(step.text)
                reasoning.append(step.reasoning_text)
            total = step.usage if total is None else total + step.usage
        self.text = "".join(text)
        self.reasoning_text = "".join(reasoning)
        if steps:
            last = steps[-1]
            self.usage = last.usage
            self.model = last.model
        else:
            self.usage = Usage()
            self.model = ""
        self.total_usage = self.usage if total is None else total
        self.response_messages = response_messages

    def finish_chunk(self) -> Finish:
        """The run's finish chunk (its response messages: a list of its own)."""
        return Finish(  # (positional: a keyword call into a dataclass __init__ costs more)
            self.finish_reason,
            self.usage,
            self.total_usage,
            list(self.response_messages),
            self.raw_finish_reason,
            None,
            self.model,
            self.object,
            self.tripwire,
        )

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        return [c for s in self.steps if s.tripwire is None for c in s.tool_calls]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        return [r for s in self.steps if s.tripwire is None for r in s.tool_results]
