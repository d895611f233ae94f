"""The processor pipeline through the runtime API (no gRPC): the seed's examples
and the runner's rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions, InvalidArgument, Message, TextPart, tool
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.lanes import FrameworkProcessors
from agentd.runtime.messages import DataPart
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.options import MemoryOptions, ProcessorSpec, ThreadRef, ToolChoice
from agentd.runtime.processors.base import (
    HOOKS,
    APIErrorResult,
    CachedLLMResponse,
    LLMRequestResult,
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
    StepOverrides,
)
from agentd.runtime.processors.factory import from_options
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow
from agentd.runtime.run import RunHandle, RunResult
from support.runs import LocalModelSpy, script

#: Memory ids for agents with (fake) memory.
IDS = {"memory": MemoryOptions("u1", ThreadRef("t1"))}


class Recorder(LocalModelSpy):
    """Records every ModelRequest the local model receives."""

    def prompt_texts(self, index: int) -> list[str]:
        return [m.text for m in self.requests[index].prompt]


@pytest.fixture
def recorder(monkeypatch: pytest.MonkeyPatch) -> Recorder:
    return Recorder(monkeypatch)


async def chunks_of(handle: RunHandle) -> list[Chunk]:
    return [c async for c in handle]


# ---------------------------------------------------------------- the seed's examples


class LowerCase(Processor):
    id = "custom-input"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        out = []
        for m in args.messages:
            out.append(
                Message(
                    role=m.role,
                    id=m.id,
                    parts=[TextPart(p.text.lower()) if isinstance(p, TextPart) else p for p in m.parts],
                )
            )
        return out


async def test_lowercasing_input_processor() -> None:
    result = await Agent(id="a", input_processors=[LowerCase()]).generate("Hello WORLD")
    assert result.text == "hello world"


async def test_process_input_may_replace_messages_and_system_messages(recorder: Recorder) -> None:
    class Rewrite(Processor):
        id = "rewrite"

        def process_input(self, args: ProcessInputArgs) -> dict[str, Any]:
            assert [m.text for m in args.system_messages] == ["original instructions"]
            return {
                "messages": [Message.user("replaced input")],
                "system_messages": [Message.system("new system")],
            }

    agent = Agent(id="a", instructions="original instructions", input_processors=[Rewrite()])
    result = await agent.generate("first input")
    assert result.text == "replaced input"
    assert recorder.prompt_texts(0) == ["new system", "replaced input"]


async def test_model_switch_at_step_0_and_tool_choice_none_after_step_5(recorder: Recorder) -> None:
    class DynamicModel(Processor):
        id = "dynamic-model"

        def process_input_step(self, args: ProcessInputStepArgs) -> StepOverrides | None:
            if args.step_number == 0:
                return StepOverrides(model="local/scripted")
            if args.step_number > 5:
                return StepOverrides(tool_choice=ToolChoice("none"))
            return None

    @tool("ping", "Pings")
    def ping(args: Any) -> str:
        return "pong"

    loop = {"toolCalls": [{"name": "ping", "args": {}}]}
    agent = Agent(id="a", model="local/scripted", tools=[ping], input_processors=[DynamicModel()])
    result = await agent.generate("go", script(*[loop] * 6, {"text": "done"}, max_steps=8))
    assert [s.model for s in result.steps][:1] == ["local/scripted"]
    assert result.text == "done" and len(result.steps) == 7
    assert [r.tool_choice for r in recorder.requests[:6]] == [None] * 6
    assert recorder.requests[6].tool_choice == ToolChoice("none")
    assert [t.name for t in recorder.requests[6].tools] == ["ping"]  # definitions still sent


async def test_prepare_step_callback(recorder: Recorder) -> None:
    seen: list[int] = []

    def prepare(args: ProcessInputStepArgs) -> dict[str, Any] | None:
        seen.append(args.step_number)
        return {"tool_choice": ToolChoice("required")} if args.step_number == 0 else None

    await Agent(id="a").generate("x", ExecutionOptions(prepare_step=prepare))
    assert seen == [0]
    assert recorder.requests[0].tool_choice == ToolChoice("required")


async def test_transient_llm_request_rewrite_is_not_kept(recorder: Recorder) -> None:
    class Rewrite(Processor):
        id = "rewrite"

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
            if args.step_number == 0:
                return LLMRequestResult(prompt=[*args.prompt, Message.user("REWRITTEN")])
            return None

    @tool("noop", "noop")
    def noop(args: Any) -> str:
        return "ok"

    agent = Agent(id="a", model="local/scripted", tools=[noop], input_processors=[Rewrite()])
    result = await agent.generate("start", script({"toolCalls": [{"name": "noop"}]}, {"text": "end"}))
    assert "REWRITTEN" in recorder.prompt_texts(0)
    assert "REWRITTEN" not in recorder.prompt_texts(1)  # not carried to the next step
    assert all("REWRITTEN" not in m.text for m in result.response_messages)


async def test_llm_request_args_hold_exactly_their_fields() -> None:
    seen: list[ProcessLLMRequestArgs] = []

    class Look(Processor):
        id = "look"

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> None:
            seen.append(args)

    await Agent(id="a", input_processors=[Look()]).generate("x", ExecutionOptions(max_processor_retries=2))
    (args,) = seen
    # Built without __init__: exactly its fields, no more, no fewer.
    assert sorted(vars(args)) == sorted(f.name for f in dataclasses.fields(ProcessLLMRequestArgs))
    assert (args.model, args.step_number, args.retry_count) == ("local/echo", 0, 0)
    assert args.prompt[-1].text == "x" and args.run_id and args.state == {}


async def test_request_and_response_hooks_share_state_per_request() -> None:
    pairs: list[tuple[str, bool]] = []

    class Pair(Processor):
        id = "pair"

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> None:
            assert "key" not in args.state or args.step_number > 0
            args.state["key"] = f"step-{args.step_number}"

        def process_llm_response(self, args: ProcessLLMResponseArgs) -> None:
            pairs.append((args.state.pop("key"), args.from_cache))

    agent = Agent(id="a", input_processors=[Pair()])
    await agent.generate("one")
    await agent.generate("two")
    assert pairs == [("step-0", False), ("step-0", False)]


class StreamFilter(Processor):
    id = "stream-filter"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        if isinstance(args.part.payload, TextDelta) and "secret" in args.part.payload.text:
            return None
        return args.part


async def test_stream_filter_drops_chunks_with_secret() -> None:
    handle = Agent(id="a", output_processors=[StreamFilter()]).stream("keep secret words")
    chunks = await chunks_of(handle)
    deltas = [c.payload.text for c in chunks if isinstance(c.payload, TextDelta)]
    assert deltas == ["keep ", "words"]
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))  # no gap where a chunk was dropped
    result = await handle.result()
    assert result.text == "keep words"  # the result is what the caller saw
    assert result.response_messages[0].text == "keep words"


class DataEmitter(Processor):
    id = "data-emitter"

    async def process_output_result(self, args: ProcessOutputResultArgs) -> None:
        assert args.writer is not None
        await args.writer.custom("data-moderation-update", {"moderatedText": "ok", "reason": "policy"})


class DataCollector(Processor):
    def __init__(self, id: str, data_parts: bool) -> None:
        self.id = id
        self.process_data_parts = data_parts

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        args.state.setdefault("types", []).append(args.part.type)
        if args.part.type.startswith("data-"):
            args.request_context.setdefault(self.id, []).append(args.part.type)
        return args.part


async def test_data_parts_skipped_unless_opted_in() -> None:
    context: dict[str, Any] = {}
    blind, seeing = DataCollector("blind", False), DataCollector("seeing", True)
    handle = Agent(id="a", output_processors=[DataEmitter(), blind, seeing]).stream(
        "hi", ExecutionOptions(request_context=context)
    )
    chunks = await chunks_of(handle)
    assert "data-moderation-update" in [c.type for c in chunks]
    result = await handle.result()
    # Persisted (not transient): the data part is in the response messages.
    assert any(
        isinstance(p, DataPart) and p.type == "data-moderation-update"
        for m in result.response_messages
        for p in m.parts
    )


async def test_data_part_gating_by_process_data_parts() -> None:
    seen: dict[str, list[str]] = {}

    class Emit(Processor):
        id = "emit"

        async def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
            if isinstance(args.part.payload, TextDelta) and args.writer and not args.state.get("sent"):
                args.state["sent"] = True
                await args.writer.custom("data-status", {"n": 1}, transient=True)
            return args.part

    class Watch(Processor):
        def __init__(self, id: str, opt_in: bool) -> None:
            self.id, self.process_data_parts = id, opt_in

        def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
            seen.setdefault(self.id, []).append(args.part.type)
            return args.part

    handle = Agent(id="a", output_processors=[Emit(), Watch("blind", False), Watch("seeing", True)]).stream("a b")
    chunks = await chunks_of(handle)
    assert "data-status" in [c.type for c in chunks]
    assert "data-status" not in seen["blind"]
    assert "data-status" in seen["seeing"]
    result = await handle.result()
    assert not any(isinstance(p, DataPart) for m in result.response_messages for p in m.parts)  # transient


class WordCounter(Processor):
    id = "word-counter"
    totals: list[int] = []

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        args.state.setdefault("word_count", 0)
        if isinstance(args.part.payload, TextDelta):
            args.state["word_count"] += len(args.part.payload.text.split())
        return args.part

    def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message]:
        WordCounter.totals.append(args.state["word_count"])
        return args.messages


async def test_word_counter_state_spans_stream_and_result_and_is_fresh_per_call() -> None:
    WordCounter.totals = []
    agent = Agent(id="a", output_processors=[WordCounter()])
    await agent.generate("one two three")
    await agent.generate("four five")
    assert WordCounter.totals == [3, 2]


class QualityChecker(Processor):
    id = "quality-checker"
    retry_counts: list[int] = []

    def process_output_step(self, args: ProcessOutputStepArgs) -> list[Message]:
        QualityChecker.retry_counts.append(args.retry_count)
        if "good" not in args.text and args.retry_count < 3:
            args.abort(
                "Response quality score too low. Please provide a more detailed answer.",
                retry=True,
                metadata={"score": 0.2},
            )
        return []


async def test_quality_checker_retries_under_max_processor_retries(recorder: Recorder) -> None:
    QualityChecker.retry_counts = []
    agent = Agent(id="a", model="local/scripted", output_processors=[QualityChecker()], max_processor_retries=3)
    result = await agent.generate("q", script({"text": "bad answer"}, {"text": "good answer"}))
    assert QualityChecker.retry_counts == [0, 1]
    assert result.text == "good answer"  # the rejected step's text is not returned
    assert result.tripwire is None and result.finish_reason == "stop"
    assert result.steps[0].tripwire is not None and result.steps[0].tripwire.retry
    # The replay keeps the first request as its prefix and appends the reason verbatim.
    first, second = recorder.prompt_texts(0), recorder.prompt_texts(1)
    assert second[: len(first)] == first
    assert second[-1] == (
        "<system-reminder>Response quality score too low. Please provide a more detailed answer.</system-reminder>"
    )


async def test_quality_checker_without_max_processor_retries_ends_as_tripwire() -> None:
    QualityChecker.retry_counts = []
    agent = Agent(id="a", model="local/scripted", output_processors=[QualityChecker()])
    result = await agent.generate("q", script({"text": "bad answer"}, {"text": "good answer"}))
    assert QualityChecker.retry_counts == [0]
    assert result.finish_reason == "other"
    assert result.tripwire is not None
    assert (result.tripwire.processor_id, result.tripwire.retry) == ("quality-checker", True)
    assert result.tripwire.metadata == {"score": 0.2}
    assert result.text == ""


async def test_usage_tracker_sees_the_result() -> None:
    seen: list[Any] = []

    class UsageTracker(Processor):
        id = "usage-tracker"

        def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message]:
            seen.append(
                (
                    args.result.usage.input_tokens,
                    args.result.usage.output_tokens,
                    args.result.finish_reason,
                    len(args.result.steps),
                    args.result.text,
                )
            )
            return args.messages

    agent = Agent(id="a", model="local/scripted", output_processors=[UsageTracker()])
    await agent.generate("x", script({"text": "a b c", "usage": {"inputTokens": 7, "outputTokens": 3}}))
    assert seen == [(7, 3, "stop", 1, "a b c")]


class MetadataProcessor(Processor):
    id = "metadata-processor"

    def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message]:
        out = []
        for m in args.messages:
            if m.role == "assistant":
                m = Message(role=m.role, parts=m.parts, id=m.id, metadata={**m.metadata, "customData": "your data"})
            out.append(m)
        return out


async def test_metadata_added_in_output_result_is_in_the_response_messages() -> None:
    handle = Agent(id="a", output_processors=[MetadataProcessor()]).stream("hi")
    chunks = await chunks_of(handle)
    result = await handle.result()
    assert result.response_messages[0].metadata["customData"] == "your data"
    finish = chunks[-1].payload
    assert finish.type == "finish" and finish.response_messages[0].metadata["customData"] == "your data"


async def test_on_violation_is_called_and_its_exceptions_swallowed() -> None:
    violations: list[ProcessorViolation] = []

    class Guard(Processor):
        id = "guard"

        def __init__(self, explode: bool) -> None:
            self.explode = explode

        def on_violation(self, violation: ProcessorViolation) -> None:  # type: ignore[override]
            violations.append(violation)
            if self.explode:
                raise RuntimeError("alerting is down")

        def process_input(self, args: ProcessInputArgs) -> None:
            args.abort("blocked input", metadata={"category": "pii"})

    for explode in (False, True):
        result = await Agent(id="a", input_processors=[Guard(explode)]).generate("x")
        assert result.tripwire is not None and result.tripwire.reason == "blocked input"
    assert [(v.processor_id, v.message, v.detail) for v in violations] == [
        ("guard", "blocked input", {"category": "pii"})
    ] * 2


async def test_context_length_error_handler_removes_two_messages_and_retries(recorder: Recorder) -> None:
    class ContextLengthHandler(Processor):
        id = "context-length-handler"

        def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
            if args.retry_count > 0:
                return None
            if isinstance(args.error, ModelAPIError) and "context length exceeded" in str(args.error):
                messages = args.message_list.get_all()
                if len(messages) > 4:
                    args.message_list.remove_by_ids([messages[1].id, messages[2].id])
                    return APIErrorResult(retry=True)
            return None

    history = [
        Message.user(f"m{i}") if i % 2 == 0 else Message(role="assistant", parts=[TextPart(f"m{i}")]) for i in range(5)
    ]
    agent = Agent(id="a", model="local/scripted", error_processors=[ContextLengthHandler()])
    result = await agent.generate(
        history,
        script({"error": {"message": "context length exceeded", "status": 400}}, {"text": "fits now"}),
    )
    assert result.text == "fits now"
    assert recorder.prompt_texts(0) == ["m0", "m1", "m2", "m3", "m4"]
    assert recorder.prompt_texts(1) == ["m0", "m3", "m4"]


async def test_error_processors_do_not_retry_when_defaults_are_off_and_list_is_empty() -> None:
    agent = Agent(id="a", model="local/scripted", error_processor_defaults=False)
    result = await agent.generate(
        "x", script({"error": {"message": "boom", "status": 500, "retryable": True}}, {"text": "ok"})
    )
    assert result.error is not None and result.error.status_code == 500


async def test_default_stream_error_retry_retries_a_transient_failure_once() -> None:
    agent = Agent(id="a", model="local/scripted")
    result = await agent.generate(
        "x", script({"error": {"message": "boom", "status": 500, "retryable": True}}, {"text": "ok"})
    )
    assert result.text == "ok" and result.error is None


class Redact(Processor):
    id = "pii-detector"

    def process_input(self, args: ProcessInputArgs) -> list[Message]:
        return [
            Message(role=m.role, id=m.id, parts=[TextPart(m.text.replace("555-1234", "[PHONE]"))])
            for m in args.messages
        ]


class Block(Processor):
    def __init__(self, id: str, trip: bool = False) -> None:
        self.id, self.trip = id, trip

    def process_input(self, args: ProcessInputArgs) -> None:
        if self.trip:
            args.abort(f"blocked by {self.id}")


async def test_workflow_with_parallel_branches_and_a_map_step() -> None:
    workflow = ProcessorWorkflow(
        "moderation-pipeline",
        [
            ParallelStep([Redact(), Block("prompt-injection-detector"), Block("moderation")]),
            MapStep("processor:pii-detector"),
        ],
    )
    result = await Agent(id="a", input_processors=[workflow]).generate("call 555-1234")
    assert result.text == "call [PHONE]"
    other = ProcessorWorkflow("w2", [ParallelStep([Redact(), Block("moderation")]), MapStep("processor:moderation")])
    result = await Agent(id="a", input_processors=[other]).generate("call 555-1234")
    assert result.text == "call 555-1234"  # the mapped branch changed nothing
    tripping = ProcessorWorkflow(
        "w3", [ParallelStep([Redact(), Block("moderation", trip=True)]), MapStep("processor:pii-detector")]
    )
    result = await Agent(id="a", input_processors=[tripping]).generate("x")
    assert result.tripwire is not None and result.tripwire.processor_id == "moderation"


def test_workflow_shape_is_checked() -> None:
    with pytest.raises(ValueError, match="followed by a map"):
        ProcessorWorkflow("w", [ParallelStep([Redact()])])
    with pytest.raises(ValueError, match="is not one of"):
        ProcessorWorkflow("w", [ParallelStep([Redact()]), MapStep("processor:nope")])


class EnsureFinalResponse(Processor):
    id = "ensure-final-response"

    def __init__(self, max_steps: int) -> None:
        self.max_steps = max_steps

    async def process_input_step(self, args: ProcessInputStepArgs) -> None:
        if args.step_number != self.max_steps - 1:
            return
        assert args.send_signal is not None
        await args.send_signal(
            type="reactive",
            contents=f"This is your final step (step {args.step_number + 1} of {self.max_steps}). "
            "Do not call any more tools. Summarize what you have found and give the user a complete final answer now.",
            attributes={"reason": "max-steps-reached", "step": args.step_number + 1},
        )


async def test_ensure_final_response_renders_the_reminder_at_the_last_step(recorder: Recorder) -> None:
    @tool("search", "Searches")
    def search(args: Any) -> str:
        return "found"

    agent = Agent(id="a", model="local/scripted", tools=[search], input_processors=[EnsureFinalResponse(5)])
    loop = {"toolCalls": [{"name": "search", "args": {}}]}
    handle = agent.stream("research", script(*[loop] * 4, {"text": "final answer"}, max_steps=5))
    chunks = await chunks_of(handle)
    result = await handle.result()
    last = recorder.prompt_texts(4)
    assert last[-1] == (
        '<system-reminder reason="max-steps-reached" step="5">This is your final step (step 5 of 5). '
        "Do not call any more tools. Summarize what you have found and give the user a complete final answer now."
        "</system-reminder>"
    )
    assert all("final step" not in t for i in range(4) for t in recorder.prompt_texts(i))
    assert result.text == "final answer"
    assert [c.payload.signal.tag_name for c in chunks if c.type == "signal"] == ["system-reminder"]


async def test_transient_reminder_is_present_once_per_call_and_never_stored(recorder: Recorder) -> None:
    class SteeringReminder(Processor):
        id = "steering-reminder"

        async def process_input_step(self, args: ProcessInputStepArgs) -> None:
            assert args.send_signal is not None
            await args.send_signal(type="reactive", contents="Stay on the current task.", transient=True)

    @tool("noop", "noop")
    def noop(args: Any) -> str:
        return "ok"

    agent = Agent(id="a", model="local/scripted", tools=[noop], input_processors=[SteeringReminder()])
    result = await agent.generate("go", script({"toolCalls": [{"name": "noop"}]}, {"text": "done"}))
    reminder = "<system-reminder>Stay on the current task.</system-reminder>"
    for i in range(2):
        texts = recorder.prompt_texts(i)
        assert texts.count(reminder) == 1  # re-sent each step, never piled up
        assert texts[-1] == reminder or i == 0  # moved after the newest message
    assert recorder.prompt_texts(1)[-1] == reminder
    assert all(reminder not in m.text for m in result.response_messages)


# ---------------------------------------------------------------- the runner's rules


async def test_tripwire_from_input_ends_the_run_without_a_model_call(recorder: Recorder) -> None:
    handle = Agent(id="a", input_processors=[Block("guard", trip=True)]).stream("x")
    chunks = await chunks_of(handle)
    assert [c.type for c in chunks] == ["start", "tripwire", "finish"]
    assert chunks[1].payload.tripwire.processor_id == "guard"
    assert chunks[2].payload.finish_reason == "other"
    assert recorder.requests == []


async def test_stream_abort_blocks_the_rest_of_the_stream() -> None:
    class Stopper(Processor):
        id = "stopper"

        def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
            if isinstance(args.part.payload, TextDelta) and "stop" in args.part.payload.text:
                args.abort()
            return args.part

    handle = Agent(id="a", output_processors=[Stopper()]).stream("go on stop here")
    chunks = await chunks_of(handle)
    result = await handle.result()
    deltas = [c.payload.text for c in chunks if isinstance(c.payload, TextDelta)]
    assert deltas == ["go ", "on "]
    assert [c.type for c in chunks][-2:] == ["tripwire", "finish"]
    assert chunks[-2].payload.tripwire.reason == "Stream part blocked by stopper"
    assert result.text == "" and result.finish_reason == "other"


async def test_stream_processor_exceptions_are_logged_and_the_chunk_passes() -> None:
    class Broken(Processor):
        id = "broken"

        def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
            raise ValueError("bug")

    result = await Agent(id="a", output_processors=[Broken()]).generate("still here")
    assert result.text == "still here"


async def test_message_hook_exceptions_fail_the_run() -> None:
    class Broken(Processor):
        id = "broken"

        def process_input(self, args: ProcessInputArgs) -> None:
            raise ValueError("bug")

    result = await Agent(id="a", input_processors=[Broken()]).generate("x")
    assert result.error is not None and "bug" in result.error.message


async def test_foreign_message_list_is_rejected() -> None:
    from agentd.runtime.processors.message_list import MessageList

    class Foreign(Processor):
        id = "foreign"

        def process_input(self, args: ProcessInputArgs) -> MessageList:
            return MessageList()

    result = await Agent(id="a", input_processors=[Foreign()]).generate("x")
    assert result.error is not None and result.error.reason == "PROCESSOR_RETURNED_EXTERNAL_MESSAGE_LIST"


async def test_state_is_keyed_by_processor_id_and_shared_across_steps() -> None:
    counts: list[int] = []

    class Counter(Processor):
        id = "counter"

        def process_input_step(self, args: ProcessInputStepArgs) -> None:
            args.state["n"] = args.state.get("n", 0) + 1
            counts.append(args.state["n"])

    @tool("noop", "noop")
    def noop(args: Any) -> str:
        return "ok"

    agent = Agent(id="a", model="local/scripted", tools=[noop], input_processors=[Counter()])
    await agent.generate("x", script({"toolCalls": [{"name": "noop"}]}, {"text": "done"}))
    await agent.generate("x", script({"text": "done"}))
    assert counts == [1, 2, 1]


async def test_processor_lists_from_the_request_context_and_per_call_replacement() -> None:
    agent = Agent(id="a", input_processors=lambda ctx: [LowerCase()] if ctx.get("lower") else [])
    assert (await agent.generate("ABC")).text == "ABC"
    assert (await agent.generate("ABC", ExecutionOptions(request_context={"lower": True}))).text == "abc"
    replaced = await Agent(id="a", input_processors=[LowerCase()]).generate(
        "ABC", ExecutionOptions(input_processors=())
    )
    assert replaced.text == "ABC"


async def test_framework_processors_run_around_the_configured_ones() -> None:
    order: list[str] = []

    class Tag(Processor):
        def __init__(self, id: str) -> None:
            self.id = id

        def process_input(self, args: ProcessInputArgs) -> None:
            order.append(f"in:{self.id}")

        def process_output_result(self, args: ProcessOutputResultArgs) -> None:
            order.append(f"out:{self.id}")

        def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
            order.append(f"err:{self.id}")

    class Memory:
        def processors(self, ctx: dict[str, Any]) -> FrameworkProcessors:
            return FrameworkProcessors(input=[Tag("memory")], output=[Tag("memory")], error=[Tag("memory")])

        async def prepare(self, *args: Any, **kwargs: Any) -> None:
            return None

    agent = Agent(
        id="a",
        model="local/scripted",
        memory=Memory(),
        input_processors=[Tag("user")],
        output_processors=[Tag("user")],
        error_processor_defaults=False,
        error_processors=[Tag("user")],
    )
    await agent.generate("x", script({"text": "hi"}, **IDS))
    assert order == ["in:memory", "in:user", "out:user", "out:memory"]
    order.clear()
    await agent.generate(
        "x",
        script(
            {"text": "hi"},
            input_processors=(Tag("call"),),
            output_processors=(),
            error_processors=(Tag("call"),),
            **IDS,
        ),
    )
    assert order == ["in:memory", "in:call", "out:memory"]
    order.clear()
    await agent.generate(
        "x", script({"error": {"message": "no", "status": 400}}, error_processors=(Tag("call"),), **IDS)
    )
    assert order[-2:] == ["err:call", "err:memory"]  # memory's error processors survive a per-call list


async def test_an_output_abort_leaves_nothing_for_the_memory_slot() -> None:
    saved: list[list[str]] = []

    class Save(Processor):
        id = "memory-save"

        def process_output_result(self, args: ProcessOutputResultArgs) -> None:
            saved.append([m.text for m in args.messages])

    class Guard(Processor):
        id = "output-guard"

        def process_output_result(self, args: ProcessOutputResultArgs) -> None:
            if "forbidden" in args.result.text:
                args.abort("no")

    class Memory:
        def processors(self, ctx: dict[str, Any]) -> FrameworkProcessors:
            return FrameworkProcessors(output=[Save()])

        async def prepare(self, *args: Any, **kwargs: Any) -> None:
            return None

    agent = Agent(id="a", memory=Memory(), output_processors=[Guard()])
    ids = ExecutionOptions(memory=MemoryOptions("u1", ThreadRef("t1")))
    await agent.generate("fine", ids)
    result = await agent.generate("forbidden words", ids)
    assert saved == [["fine"]]
    assert result.tripwire is not None and result.tripwire.processor_id == "output-guard"


async def test_error_lane_llm_request_hooks_and_one_run_for_both_lanes(recorder: Recorder) -> None:
    calls: list[str] = []

    class Both(Processor):
        id = "both"

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> None:
            calls.append(self.id)

        def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
            return None

    class ErrorOnly(Processor):
        id = "error-only"

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> None:
            calls.append(self.id)

        def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
            return None

    both = Both()
    await Agent(id="a", input_processors=[both], error_processors=[both, ErrorOnly()]).generate("x")
    assert calls == ["both", "error-only"]


async def test_first_cached_response_wins_and_replays_without_a_model_call(recorder: Recorder) -> None:
    from agentd.runtime.chunks import TextEnd, TextStart, Usage
    from agentd.runtime.models.base import ModelFinish

    replayed = CachedLLMResponse(
        chunks=[
            TextStart("t"),
            TextDelta("t", "from cache"),
            TextEnd("t"),
            ModelFinish("stop", Usage(1, 2, 3)),
        ]
    )
    later: list[bool] = []

    class Cache(Processor):
        def __init__(self, id: str, text: str) -> None:
            self.id, self.text = id, text

        def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult:
            later.append(True)
            return LLMRequestResult(response=replayed if self.id == "first" else CachedLLMResponse(chunks=[]))

        def process_llm_response(self, args: ProcessLLMResponseArgs) -> None:
            assert args.from_cache

    handle = Agent(id="a", input_processors=[Cache("first", ""), Cache("second", "")]).stream("x")
    chunks = await chunks_of(handle)
    result: RunResult = await handle.result()
    assert result.text == "from cache" and recorder.requests == []
    assert later == [True, True]  # later processors still ran
    step_start = next(c for c in chunks if c.type == "step-start")
    assert step_start.payload.started_at is None  # no provider call happened


async def test_tool_hooks_skip_and_observe_with_agent_metadata() -> None:
    from agentd.runtime.options import ToolHooks

    seen: list[Any] = []

    @tool("delete_record", "Deletes")
    def delete_record(args: Any) -> str:
        raise AssertionError("must not run")

    @tool("fails", "Fails")
    def fails(args: Any) -> str:
        raise RuntimeError("tool broke")

    def before(ctx: Any) -> dict[str, Any] | None:
        seen.append(("before", ctx.tool_name, ctx.metadata))
        if ctx.tool_name == "delete_record":
            return {"proceed": False, "output": {"blocked": True}}
        return None

    def after(ctx: Any) -> None:
        seen.append(("after", ctx.tool_name, ctx.output, str(ctx.error)))

    agent = Agent(
        id="a",
        name="Agent A",
        model="local/scripted",
        tools=[delete_record, fails],
        hooks=ToolHooks(before_tool_call=lambda ctx: None),
    )
    result = await agent.generate(
        "x",
        script(
            {"toolCalls": [{"id": "1", "name": "delete_record"}, {"id": "2", "name": "fails"}]},
            {"text": "ok"},
            hooks=ToolHooks(before_tool_call=before, after_tool_call=after),
        ),
    )
    assert result.tool_results[0].result == {"blocked": True}
    assert result.tool_results[1].is_error and "tool broke" in str(result.tool_results[1].result)
    assert seen[0] == ("before", "delete_record", {"agentId": "a", "agentName": "Agent A"})
    assert ("after", "fails", None, "tool broke") in seen


async def test_sub_agents_are_tools_with_nested_chunks() -> None:
    helper = Agent(id="helper", description="Answers sub-questions")
    agent = Agent(id="lead", model="local/scripted", agents={"ask_helper": helper})
    handle = agent.stream(
        "x",
        script(
            {"toolCalls": [{"id": "c", "name": "ask_helper", "args": {"prompt": "nested words"}}]},
            {"text": "done"},
        ),
    )
    chunks = await chunks_of(handle)
    result = await handle.result()
    nested = [c for c in chunks if c.parent_run_id == handle.run_id]
    assert nested and nested[0].type == "start" and nested[0].run_id != handle.run_id
    assert [c.seq for c in nested] == list(range(1, len(nested) + 1))
    assert result.tool_results[0].result == "nested words"


async def test_request_context_schema_names_the_failing_path() -> None:
    schema = {"type": "object", "properties": {"tier": {"enum": ["free", "pro"]}}, "required": ["tier"]}
    agent = Agent(id="a", request_context_schema=schema)
    with pytest.raises(InvalidArgument) as info:
        await agent.generate("x", ExecutionOptions(request_context={"tier": "gold"}))
    assert info.value.reason == "REQUEST_CONTEXT_INVALID"
    assert [v.field for v in info.value.violations] == ["options.request_context.tier"]
    with pytest.raises(InvalidArgument) as info:
        await agent.generate("x")
    assert [v.field for v in info.value.violations] == ["options.request_context.tier"]
    assert (await agent.generate("x", ExecutionOptions(request_context={"tier": "pro"}))).text == "x"


async def test_error_lane_budget_is_3_when_max_processor_retries_is_unset(recorder: Recorder) -> None:
    class AlwaysRetry(Processor):
        id = "always-retry"

        def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult:
            return APIErrorResult(retry=True)

    failing = {"error": {"message": "nope", "status": 400}}
    agent = Agent(id="a", model="local/scripted", error_processors=[AlwaysRetry()], error_processor_defaults=False)
    result = await agent.generate("x", script(failing))
    assert len(recorder.requests) == 4  # the first call and 3 retries
    assert result.error is not None
    recorder.requests.clear()
    await agent.generate("x", script(failing, max_processor_retries=1))
    assert len(recorder.requests) == 2


async def test_a_processor_max_retries_never_raises_the_agent_cap(recorder: Recorder) -> None:
    from agentd.runtime.processors.builtins.error_defaults import StreamErrorRetryProcessor

    failing = {"error": {"message": "overloaded", "status": 503, "retryable": True}}
    agent = Agent(
        id="a",
        model="local/scripted",
        error_processors=[StreamErrorRetryProcessor(max_retries=5)],
        max_processor_retries=2,
    )
    result = await agent.generate("x", script(failing))
    assert len(recorder.requests) == 3 and result.error is not None


async def test_process_tool_result_rewrites_the_emitted_tool_result() -> None:
    from agentd.runtime.processors.base import ProcessToolResultArgs

    class Shorten(Processor):
        id = "shorten"

        def process_tool_result(self, args: ProcessToolResultArgs) -> None:
            assert (args.tool_name, args.result) == ("fetch", "a very long document")
            args.message_list.update_tool_result(args.tool_call_id, "a short summary")

    @tool("fetch", "Fetches")
    def fetch(args: Any) -> str:
        return "a very long document"

    agent = Agent(id="a", model="local/scripted", tools=[fetch], output_processors=[Shorten()])
    handle = agent.stream("x", script({"toolCalls": [{"id": "t", "name": "fetch"}]}, {"text": "done"}))
    chunks = await chunks_of(handle)
    emitted = [c.payload.result.result for c in chunks if c.type == "tool-result"]
    assert emitted == ["a short summary"]
    assert (await handle.result()).tool_results[0].result == "a short summary"


async def test_active_tools_and_structured_output_shape_the_tool_definitions(recorder: Recorder) -> None:
    from agentd.runtime.options import StructuredOutput, ToolChoice

    @tool("one", "1")
    def one(args: Any) -> int:
        return 1

    @tool("two", "2")
    def two(args: Any) -> int:
        return 2

    agent = Agent(id="a", tools=[one, two])
    await agent.generate("x", ExecutionOptions(active_tools=("two",)))
    await agent.generate("x", ExecutionOptions(active_tools=()))
    await agent.generate("x")
    schema = StructuredOutput({"type": "object"})
    await agent.generate("x", ExecutionOptions(structured_output=schema))
    await agent.generate("x", ExecutionOptions(structured_output=schema, tool_choice=ToolChoice("none")))
    await agent.generate("x", ExecutionOptions(tool_choice=ToolChoice("none")))
    offered = [[t.name for t in r.tools] for r in recorder.requests]
    # Tools go beside a schema; tool_choice none drops them only when a schema is sent too (the seed).
    assert offered == [["two"], [], ["one", "two"], ["one", "two"], [], ["one", "two"]]


async def test_a_fallback_model_answers_when_the_error_processors_give_up(recorder: Recorder) -> None:
    agent = Agent(id="a", model="local/scripted", fallback_models=["local/echo"], error_processor_defaults=False)
    failing = ExecutionOptions(
        provider_options={"local": {"scripts": {"scripted": [{"error": {"message": "down", "status": 503}}]}}}
    )
    result = await agent.generate("hello fallback", failing)
    assert result.error is None and result.text == "hello fallback"
    assert result.model == "local/echo" and result.steps[0].model == "local/echo"
    alone = await Agent(id="b", model="local/scripted", error_processor_defaults=False).generate(
        "x", script({"error": {"message": "down", "status": 503}})
    )
    assert alone.error is not None and alone.error.status_code == 503


class Misspelt(Processor):
    id = "misspelt"

    def process_ouput_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        return args.part


class DataAware(Processor):
    id = "data-aware"
    process_data_parts = True  # a setting, not a hook

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        return args.part


def _refused(info: pytest.ExceptionInfo[InvalidArgument], name: str) -> None:
    assert info.value.reason == "PROCESSOR_UNKNOWN_HOOK"
    assert name in info.value.message and "misspelt" in info.value.message
    for hook in HOOKS:  # the message lists the hooks there are
        assert hook in info.value.message


async def test_a_process_method_that_is_no_hook_is_refused() -> None:
    with pytest.raises(InvalidArgument) as info:
        await Agent(id="a", output_processors=[Misspelt()]).generate("x")
    _refused(info, "process_ouput_stream")
    with pytest.raises(InvalidArgument) as info:
        ProcessorWorkflow("w", [ParallelStep([Misspelt()]), MapStep("processor:misspelt")])
    _refused(info, "process_ouput_stream")
    with pytest.raises(InvalidArgument) as info:
        from_options(Misspelt)  # registering a class
    _refused(info, "process_ouput_stream")
    registry = ProcessorRegistry({"misspelt": lambda options: Misspelt()})
    with pytest.raises(InvalidArgument) as info:
        registry.build(ProcessorSpec("misspelt"))  # what any factory builds is checked too
    _refused(info, "process_ouput_stream")
    own = DataAware()
    own.id = "misspelt"
    own.process_inptu = lambda args: None  # type: ignore[attr-defined]
    with pytest.raises(InvalidArgument) as info:
        await Agent(id="a", input_processors=[own]).generate("x")
    _refused(info, "process_inptu")
    result = await Agent(id="a", output_processors=[DataAware()]).generate("fine")
    assert result.error is None and result.text == "fine"


def test_a_message_added_again_replaces_its_listed_copy_in_place_after_any_change_to_the_list() -> None:
    ml = MessageList()
    first, second = Message.user("one"), Message.user("two")
    ml.add(first)
    ml.add(second)
    ml.prepend([Message("assistant", [TextPart("recalled")], "old")])
    ml.remove_by_ids(["old"])
    again = Message("user", [TextPart("one, edited")], first.id)
    ml.add(again, "context")
    assert [m.text for m in ml.get_all()] == ["one, edited", "two"]
    assert again.created_at == first.created_at and ml.source_of(first.id) == "context"
    ml.add(Message("assistant", [TextPart("old, back")], "old"), "response")  # removed: added anew, last
    assert [m.id for m in ml.get_all()] == [first.id, second.id, "old"]
