"""The phases a workflow runs in, and how a hook's result is applied.

Each hook a workflow takes part in (input, input step, output stream, output
step, output result) has a `Phase` (workflow.py): what the hook runs over, how
its result is applied, how a parallel branch gets its own copy and how the
chosen branch's output continues. The runner (`HookCaller`) calls the hooks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any, Protocol

from agentd.runtime.chunks import Chunk
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import (
    Hook,
    HookArgs,
    ProcessInputStepArgs,
    StepOverrides,
)
from agentd.runtime.processors.message_list import ExternalMessageListError, MessageList, Source
from agentd.runtime.processors.stream_lane import StreamStep


class ProcessorRunError(Exception):
    """A processor broke the contract (e.g. returned a foreign MessageList)."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class StepInput:
    """The running per-step configuration that process_input_step hooks chain."""

    model: str
    tools: dict[str, Any]
    tool_choice: Any
    active_tools: tuple[str, ...] | None
    provider_options: dict[str, Any]
    model_settings: Any
    structured_output: Any


class HookCaller(Protocol):
    """What the phases need from the runner."""

    async def call(self, processor: Any, hook: Hook, args: HookArgs) -> Any: ...

    def common(self, processor: Any, *, stream: bool = False) -> dict[str, Any]: ...

    def send_signal(self, processor: Any) -> Any: ...

    def stream_step(self, processor: Any) -> StreamStep:
        """`processor`'s output-stream hook as the run calls it (its `stream_parts` included)."""
        ...

    async def call_stream(
        self, step: StreamStep, part: Chunk, emitted: list[Chunk], message_list: MessageList | None
    ) -> Chunk | None:
        """Runs the hook on `part` under the stream rules; the chunk that goes on (None: dropped)."""
        ...

    def in_llm_request(self, processor: Any) -> bool:
        """True when `processor`'s process_llm_request runs too."""
        ...


# ---------------------------------------------------------------- results


def check_list(result: Any, message_list: MessageList, processor: Any) -> bool:
    """True when the hook returned the list it was given (already applied)."""
    if isinstance(result, MessageList):
        if result is not message_list:
            raise ProcessorRunError(
                f"processor {processor.id!r} returned a MessageList it was not given",
                ExternalMessageListError.reason,
            )
        return True
    return False


def apply_input(result: Any, message_list: MessageList, view: list[Message], processor: Any) -> None:
    """What process_input returned."""
    if result is None or check_list(result, message_list, processor):
        return
    if isinstance(result, dict) and ("messages" in result or "system_messages" in result):
        if result.get("system_messages") is not None:
            message_list.replace_all_system_messages(list(result["system_messages"]))
        if result.get("messages") is not None:
            message_list.apply(list(result["messages"]), view, "input")
        return
    if isinstance(result, list):
        message_list.apply(result, view, "input")
        return
    raise ProcessorRunError(
        f"processor {processor.id!r}: process_input returned {type(result).__name__}",
        "PROCESSOR_INVALID_RESULT",
    )


def apply_messages(
    result: Any,
    message_list: MessageList,
    view: list[Message],
    processor: Any,
    source: Source,
    empty_is_noop: bool = False,
) -> None:
    """What an output hook (step, result, tool result) returned."""
    if result is None or check_list(result, message_list, processor):
        return
    if not isinstance(result, list):
        raise ProcessorRunError(
            f"processor {processor.id!r} returned {type(result).__name__}", "PROCESSOR_INVALID_RESULT"
        )
    if empty_is_noop and not result:
        return  # validators end with `return []` on success: it changes nothing
    message_list.apply(result, view, source)


# ---------------------------------------------------------------- phases


class MessagePhase:
    """process_input, process_output_step and process_output_result: the hook
    sees `view(list)` and returns messages; a branch works on a clone, and the
    chosen clone's view replaces the list's (and, for input, its system messages)."""

    def __init__(
        self,
        runner: HookCaller,
        hook: Hook,
        view: Callable[[MessageList], list[Message]],
        make: Callable[[Any, MessageList, list[Message]], HookArgs],
        *,
        source: Source = "response",
        empty_is_noop: bool = False,
    ) -> None:
        self.runner, self.hook, self.view, self.make = runner, hook, view, make
        self.source: Source = source
        self.empty_is_noop = empty_is_noop

    async def call(self, processor: Any, value: MessageList) -> MessageList:
        view = self.view(value)
        result = await self.runner.call(processor, self.hook, self.make(processor, value, view))
        if self.hook == "process_input":
            apply_input(result, value, view, processor)
        else:
            apply_messages(result, value, view, processor, self.source, self.empty_is_noop)
        return value

    def snapshot(self, value: MessageList) -> list[Message]:
        return self.view(value)

    def fork(self, value: MessageList) -> MessageList:
        return value.clone()

    def join(
        self, value: MessageList, before: list[Message], branches: Sequence[MessageList], chosen: int
    ) -> MessageList:
        value.apply(self.view(branches[chosen]), before, self.source)
        if self.hook == "process_input":
            value.replace_all_system_messages(branches[chosen].system_messages)
        return value

    def stopped(self, value: MessageList) -> bool:
        return False


@dataclass(frozen=True)
class StepValue:
    """What the input-step chain passes on: the message list and the step's input."""

    message_list: MessageList
    step_input: StepInput


class InputStepPhase:
    """process_input_step: the hook chains the step input and may change the
    messages; the chosen branch's messages, system messages and step input continue."""

    hook: Hook = "process_input_step"

    def __init__(self, runner: HookCaller, step_number: int, steps: list[Any], message_id: str) -> None:
        self.runner, self.step_number, self.steps, self.message_id = runner, step_number, steps, message_id

    async def call(self, processor: Any, value: StepValue) -> StepValue:
        runner, message_list, step_input = self.runner, value.message_list, value.step_input
        view = message_list.get_all()
        args = ProcessInputStepArgs(
            messages=list(view),
            message_list=message_list,
            step_number=self.step_number,
            steps=self.steps,
            message_id=self.message_id,
            system_messages=message_list.system_messages,
            model=step_input.model,
            tools=dict(step_input.tools),
            tool_choice=step_input.tool_choice,
            active_tools=step_input.active_tools,
            provider_options=dict(step_input.provider_options),
            model_settings=step_input.model_settings,
            structured_output=step_input.structured_output,
            send_signal=runner.send_signal(processor),
            llm_request_stage=runner.in_llm_request(processor),
            **runner.common(processor),
        )
        result = await runner.call(processor, "process_input_step", args)
        return StepValue(message_list, apply_step_overrides(result, message_list, view, step_input, processor))

    def snapshot(self, value: StepValue) -> list[Message]:
        return value.message_list.get_all()

    def fork(self, value: StepValue) -> StepValue:
        return StepValue(value.message_list.clone(), value.step_input)

    def join(self, value: StepValue, before: list[Message], branches: Sequence[StepValue], chosen: int) -> StepValue:
        branch = branches[chosen]
        value.message_list.apply(branch.message_list.get_all(), before, "input")
        value.message_list.replace_all_system_messages(branch.message_list.system_messages)
        return StepValue(value.message_list, branch.step_input)

    def stopped(self, value: StepValue) -> bool:
        return False


_OVERRIDABLE = (
    "model",
    "tools",
    "tool_choice",
    "active_tools",
    "provider_options",
    "model_settings",
    "structured_output",
)


def apply_step_overrides(
    result: Any, message_list: MessageList, view: list[Message], step_input: StepInput, processor: Any
) -> StepInput:
    """What process_input_step returned, applied: the next step input."""
    if result is None or check_list(result, message_list, processor):
        return step_input
    if isinstance(result, list):
        message_list.apply(result, view, "input")
        return step_input
    if isinstance(result, dict):
        unknown = set(result) - {f.name for f in fields(StepOverrides)}
        if unknown:
            raise ProcessorRunError(
                f"processor {processor.id!r}: process_input_step returned unknown keys {sorted(unknown)}",
                "PROCESSOR_INVALID_RESULT",
            )
        result = StepOverrides(**result)
    if not isinstance(result, StepOverrides):
        raise ProcessorRunError(
            f"processor {processor.id!r}: process_input_step returned {type(result).__name__}",
            "PROCESSOR_INVALID_RESULT",
        )
    if result.messages is not None and result.message_list is not None:
        raise ProcessorRunError(
            f"processor {processor.id!r} returned both messages and message_list",
            "PROCESSOR_RETURNED_MESSAGES_AND_MESSAGE_LIST",
        )
    if result.message_list is not None:
        check_list(result.message_list, message_list, processor)
    if result.messages is not None:
        message_list.apply(result.messages, view, "input")
    if result.system_messages is not None:
        message_list.replace_all_system_messages(result.system_messages)
    changes = {name: getattr(result, name) for name in _OVERRIDABLE if getattr(result, name) is not None}
    return replace(step_input, **changes) if changes else step_input


@dataclass(frozen=True)
class Part:
    """An output-stream chunk after a processor, with the chunks it queued."""

    #: None once a processor dropped it.
    chunk: Chunk | None
    #: Chunks queued with `emit_after`, to go through the whole chain next.
    emitted: list[Chunk]


class StreamPhase:
    """process_output_stream: the hook replaces (or drops) the chunk; a branch
    gets a deep copy, the chosen branch's chunk continues and every branch's
    queued chunks follow, in branch order."""

    hook: Hook = "process_output_stream"

    def __init__(self, runner: HookCaller, message_list: MessageList | None) -> None:
        self.runner, self.message_list = runner, message_list

    async def call(self, processor: Any, value: Part) -> Part:
        part = value.chunk
        assert part is not None
        if is_data(part) and not getattr(processor, "process_data_parts", False):
            return value  # data-* chunks bypass processors that did not opt in
        step = self.runner.stream_step(processor)
        return Part(await self.runner.call_stream(step, part, value.emitted, self.message_list), value.emitted)

    def snapshot(self, value: Part) -> list[Message]:
        return []

    def fork(self, value: Part) -> Part:
        return Part(copy.deepcopy(value.chunk), [])

    def join(self, value: Part, before: list[Message], branches: Sequence[Part], chosen: int) -> Part:
        for branch in branches:
            value.emitted.extend(branch.emitted)
        return Part(branches[chosen].chunk, value.emitted)

    def stopped(self, value: Part) -> bool:
        return value.chunk is None


def is_data(chunk: Chunk) -> bool:
    return chunk.type.startswith("data-") or chunk.type == "signal"
