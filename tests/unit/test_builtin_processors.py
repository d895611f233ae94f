"""Built-in processors called directly with hand-built hook args (no gRPC):
token-limiter, tool-call-filter, unicode-normalizer, batch-parts."""

from __future__ import annotations

import copy
import math
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from agentd.runtime.chunks import Chunk, Finish, ObjectPartial, TextDelta, TextEnd, TextStart, ToolCall, Usage
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, Message, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.options import ProcessorSpec
from agentd.runtime.processors.base import (
    LLMRequestResult,
    OutputResult,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessOutputResultArgs,
    ProcessOutputStreamArgs,
    TripWire,
)
from agentd.runtime.processors.builtins import batch_parts as batch_parts_module
from agentd.runtime.processors.builtins.batch_parts import BatchParts, BatchPartsProcessor
from agentd.runtime.processors.builtins.token_limiter import (
    TOKENS_PER_CONVERSATION,
    TOKENS_PER_MESSAGE,
    TokenLimiter,
    TokenLimiterProcessor,
)
from agentd.runtime.processors.builtins.tool_call_filter import ToolCallFilter
from agentd.runtime.processors.builtins.unicode_normalizer import UnicodeNormalizer
from agentd.runtime.processors.catalogue import default_registry
from agentd.runtime.processors.message_list import MessageList

# ---------------------------------------------------------------- helpers


def user(text: str) -> Message:
    return Message.user(text)


def assistant(*parts: Any) -> Message:
    return Message(role="assistant", parts=[TextPart(p) if isinstance(p, str) else p for p in parts])


def call(call_id: str, name: str, args: Any = None) -> ToolCallPart:
    return ToolCallPart(call_id, name, args if args is not None else {"q": call_id})


def result(call_id: str, name: str, value: Any = None, *, is_error: bool = False) -> ToolResultPart:
    return ToolResultPart(call_id, name, value if value is not None else {"answer": call_id}, is_error=is_error)


def llm_args(prompt: list[Message], message_list: MessageList | None = None) -> ProcessLLMRequestArgs:
    return ProcessLLMRequestArgs(prompt=prompt, model="local/echo", step_number=0, steps=[], message_list=message_list)


def step_args(message_list: MessageList, *, llm_request_stage: bool = False) -> ProcessInputStepArgs:
    return ProcessInputStepArgs(
        messages=message_list.get_all(),
        message_list=message_list,
        step_number=0,
        steps=[],
        message_id="msg_1",
        system_messages=message_list.system_messages,
        model="local/echo",
        tools={},
        tool_choice=None,
        active_tools=None,
        provider_options={},
        model_settings=None,
        structured_output=None,
        llm_request_stage=llm_request_stage,
    )


_SEQ = iter(range(1, 1_000_000))


def chunk(payload: Any) -> Chunk:
    return Chunk(payload=payload, run_id="run_1", seq=next(_SEQ))


def delta(text: str, text_id: str = "t1") -> Chunk:
    return chunk(TextDelta(text_id, text))


def finish() -> Chunk:
    return chunk(Finish("stop", Usage(), Usage()))


def stream_args(
    part: Chunk, state: dict[str, Any], emit_after: Callable[[Chunk], None] | None = None
) -> ProcessOutputStreamArgs:
    return ProcessOutputStreamArgs(part=part, stream_parts=[part], state=state, emit_after=emit_after)


def run_stream(processor: Any, chunks: list[Chunk], state: dict[str, Any] | None = None) -> list[Chunk]:
    """What the runner does for one output processor: chunks queued with
    emit_after go through the chain again, right after the current result."""
    state = {} if state is None else state
    out: list[Chunk] = []
    for incoming in chunks:
        queue = [incoming]
        while queue:
            current = queue.pop(0)
            extra: list[Chunk] = []
            emitted = processor.process_output_stream(stream_args(current, state, extra.append))
            if emitted is not None:
                out.append(emitted)
            queue = extra + queue
    return out


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.payload.text if isinstance(c.payload, TextDelta) else c.type for c in chunks]


# ---------------------------------------------------------------- TokenLimiter: counting


def test_the_offline_tokenizer_gives_real_o200k_counts() -> None:
    limiter = TokenLimiter(100)
    assert limiter.count_tokens("hello world") == 2
    assert limiter.count_tokens("") == 0
    # Special-token text is counted as ordinary text, never rejected.
    assert limiter.count_tokens("<|endoftext|>") > 1
    message = user("hello world")
    assert limiter.count_message(message) == limiter.count_tokens("userhello world") + TOKENS_PER_MESSAGE


def test_media_and_tool_parts_use_the_documented_constants() -> None:
    limiter = TokenLimiter(100)
    image = Message(role="user", parts=[FilePart("image/png", data=b"x" * 10_000)])
    assert limiter.count_message(image) == limiter.count_tokens("user") + TOKENS_PER_MESSAGE + 765
    by_url = Message(role="user", parts=[FilePart("application/pdf", url="https://example.invalid/a.pdf")])
    assert limiter.count_message(by_url) == limiter.count_tokens("user") + TOKENS_PER_MESSAGE + 258
    inline = Message(role="user", parts=[FilePart("application/pdf", data=b"x" * 400)])
    assert limiter.count_message(inline) == limiter.count_tokens("user") + TOKENS_PER_MESSAGE + 100
    tool_step = assistant(ToolCallPart("c1", "weather", {"city": "Paris"}), result("c1", "weather", {"t": 20}))
    expected = limiter.count_tokens('assistantweather{"city":"Paris"}{"t":20}') + TOKENS_PER_MESSAGE - 24
    assert limiter.count_message(tool_step) == max(0.0, expected)


def test_the_tokenizer_loads_without_a_network(tmp_path: Any) -> None:
    """A fresh process with an empty home and every download sent to a dead
    proxy still counts: the encoding comes from the bundled file."""
    env = {k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path), HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    code = (
        "import os\n"
        "from agentd.runtime.processors.builtins.token_limiter import get_encoding\n"
        "print(len(get_encoding('o200k_base').encode('hello world')))\n"
        "print(os.environ.get('TIKTOKEN_CACHE_DIR'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "None"]  # the environment is restored after the load
    assert list((tmp_path / ".cache" / "agentd" / "tiktoken").iterdir())


# ---------------------------------------------------------------- TokenLimiter: input side


def sized_messages(limiter: TokenLimiter) -> tuple[Message, list[Message]]:
    system = Message.system("You are terse.")
    history = [user(f"message number {i} " + "word " * 20) for i in range(4)]
    return system, history


def test_keeps_system_and_newest_messages_and_drops_the_oldest() -> None:
    probe = TokenLimiter(10_000)
    system, history = sized_messages(probe)
    fit = probe.count_message(system) + TOKENS_PER_CONVERSATION + sum(probe.count_message(m) for m in history[2:])
    limiter = TokenLimiter(math.ceil(fit))
    out = limiter.process_llm_request(llm_args([system, *history]))
    assert isinstance(out, LLMRequestResult) and out.prompt is not None
    assert [m.id for m in out.prompt] == [system.id, history[2].id, history[3].id]
    # One token less and only the newest fits.
    tighter = TokenLimiter(math.ceil(fit) - 2)
    out = tighter.process_llm_request(llm_args([system, *history]))
    assert out is not None and out.prompt is not None
    assert [m.id for m in out.prompt] == [system.id, history[3].id]
    # Everything fits: no change.
    assert TokenLimiter(10_000).process_llm_request(llm_args([system, *history])) is None


def test_best_fit_keeps_scanning_and_contiguous_stops() -> None:
    small_old = user("hi")
    big = user("lorem ipsum " * 200)
    newest = user("what is the weather today?")
    probe = TokenLimiter(10_000)
    limit = math.ceil(probe.count_message(small_old) + probe.count_message(newest) + TOKENS_PER_CONVERSATION)
    best = TokenLimiter(limit).process_llm_request(llm_args([small_old, big, newest]))
    assert best is not None and best.prompt is not None
    assert [m.id for m in best.prompt] == [small_old.id, newest.id]
    contiguous = TokenLimiter(limit, trim_mode="contiguous").process_llm_request(llm_args([small_old, big, newest]))
    assert contiguous is not None and contiguous.prompt is not None
    assert [m.id for m in contiguous.prompt] == [newest.id]


def test_system_messages_alone_over_the_limit_trip() -> None:
    system = Message.system("rules " * 100)
    limiter = TokenLimiter(50)
    with pytest.raises(TripWire) as caught:
        limiter.process_llm_request(llm_args([system, user("hi")]))
    assert caught.value.retry is False
    assert caught.value.metadata == {"systemTokens": limiter.count_message(system), "limit": 50}


def test_nothing_fits_trips_with_the_budget() -> None:
    system = Message.system("Be brief.")
    huge = user("lorem ipsum " * 300)
    limiter = TokenLimiter(100)
    with pytest.raises(TripWire) as caught:
        limiter.process_llm_request(llm_args([system, huge]))
    system_tokens = limiter.count_message(system)
    assert caught.value.metadata == {
        "systemTokens": system_tokens,
        "limit": 100,
        "remainingBudget": 100 - system_tokens - TOKENS_PER_CONVERSATION,
        "messageCount": 1,
    }


def test_no_messages_at_all_trips() -> None:
    with pytest.raises(TripWire):
        TokenLimiter(100).process_llm_request(llm_args([]))


def test_a_tool_call_and_its_result_message_are_kept_or_dropped_together() -> None:
    old = user("first question " * 10)
    calls = assistant("let me look", call("c1", "search"))
    results = Message(role="user", parts=[result("c1", "search", "x " * 40)])
    newest = user("thanks")
    probe = TokenLimiter(10_000)
    # Room for the newest message and the call message, not for the result message too.
    limit = math.ceil(probe.count_message(newest) + probe.count_message(calls) + TOKENS_PER_CONVERSATION)
    out = TokenLimiter(limit, trim_mode="contiguous").process_llm_request(llm_args([old, calls, results, newest]))
    assert out is not None and out.prompt is not None
    assert [m.id for m in out.prompt] == [newest.id]


def test_process_input_step_trims_the_list_unless_the_prompt_stage_runs() -> None:
    probe = TokenLimiter(10_000)
    system, history = sized_messages(probe)
    ml = MessageList([system])
    ml.extend(history[:3], "memory")
    ml.add(history[3], "input")
    fit = probe.count_message(system) + TOKENS_PER_CONVERSATION + sum(probe.count_message(m) for m in history[2:])
    limiter = TokenLimiter(math.ceil(fit))
    assert limiter.process_input_step(step_args(ml, llm_request_stage=True)) is None
    args = step_args(ml)
    kept = limiter.process_input_step(args)
    assert kept is not None and [m.id for m in kept] == [history[2].id, history[3].id]
    ml.apply(kept, args.messages, "input")  # what the runner does with the result
    assert [m.id for m in ml.get_all()] == [history[2].id, history[3].id]


def test_process_input_trims_the_new_input() -> None:
    ml = MessageList([Message.system("Be brief.")])
    inputs = [user("an older input message " * 30), user("the question")]
    ml.extend(inputs, "input")
    limiter = TokenLimiter(60)
    out = limiter.process_input(
        ProcessInputArgs(messages=ml.get_input(), system_messages=ml.system_messages, message_list=ml)
    )
    assert out is not None and [m.id for m in out] == [inputs[1].id]


def test_memory_only_drops_whole_tool_groups_of_history_and_never_the_input() -> None:
    ml = MessageList()
    asked = assistant(call("c1", "search", {"q": "x " * 40}))
    answer = Message(role="tool", parts=[result("c1", "search", "found " * 40)])
    history = [user("first " * 40), asked, answer, user("latest remembered")]
    ml.extend(history, "memory")
    question = user("the question " * 40)
    ml.add(question, "input")
    limiter = TokenLimiter(120, trim_mode="memory-only", at_max_remove_tokens=0)
    args = ProcessInputArgs(messages=ml.get_input(), system_messages=ml.system_messages, message_list=ml)
    assert limiter.process_input(args) is ml
    kept = [m.id for m in ml.get_all()]
    assert question.id in kept and history[0].id not in kept
    assert (asked.id in kept) == (answer.id in kept)  # a call and its result go together
    assert limiter.process_input(args) is None  # under the limit now: nothing more to trim


def test_options_are_validated() -> None:
    with pytest.raises(ValueError):
        TokenLimiter(-1)
    with pytest.raises(ValueError):
        TokenLimiter(10, strategy="explode")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TokenLimiter(10, trim_mode="newest")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TokenLimiter(10, trim_mode="memory-only", at_max_remove_tokens=11)
    assert TokenLimiter(0).limit == 0
    assert TokenLimiter(100, trim_mode="memory-only").at_max_remove_tokens == 25
    with pytest.raises(ValueError):
        TokenLimiter(10, encoding="no_such_encoding")
    assert TokenLimiter(4000).limit == 4000
    assert TokenLimiterProcessor is TokenLimiter
    assert TokenLimiter(10, encoding="cl100k_base").count_tokens("hello world") == 2


# ---------------------------------------------------------------- TokenLimiter: output side


def test_output_truncate_drops_the_chunk_over_the_limit_and_everything_counted_after() -> None:
    limiter = TokenLimiter(5)
    state: dict[str, Any] = {}
    parts = [
        delta("hello world"),
        delta("hello world"),
        delta("hello world"),
        chunk(TextEnd("t1")),
        delta("hi"),
    ]
    out = [limiter.process_output_stream(stream_args(p, state)) for p in parts]
    assert out[:2] == parts[:2]
    assert out[2] is None  # 6 > 5
    assert out[3] is parts[3]  # not counted: passes
    assert out[4] is None  # after the limit, every counted chunk is dropped
    assert state["output_tokens"] == 6


def test_output_abort_trips_with_the_documented_message() -> None:
    limiter = TokenLimiter(5, strategy="abort")
    state: dict[str, Any] = {}
    limiter.process_output_stream(stream_args(delta("hello world"), state))
    limiter.process_output_stream(stream_args(delta("hello world"), state))
    with pytest.raises(TripWire, match=r"^Token limit of 5 exceeded \(current: 6\)$"):
        limiter.process_output_stream(stream_args(delta("hello world"), state))


def test_output_counts_live_in_state_and_part_mode_counts_each_chunk() -> None:
    limiter = TokenLimiter(3)
    first: dict[str, Any] = {}
    second: dict[str, Any] = {}
    assert limiter.process_output_stream(stream_args(delta("hello world"), first)) is not None
    assert limiter.process_output_stream(stream_args(delta("hello world"), second)) is not None  # own count
    assert limiter.process_output_stream(stream_args(delta("hello world"), first)) is None
    per_part = TokenLimiter(3, count_mode="part")
    state: dict[str, Any] = {}
    for _ in range(5):
        assert per_part.process_output_stream(stream_args(delta("hello world"), state)) is not None
    assert per_part.process_output_stream(stream_args(delta("one two three four"), state)) is None
    # object chunks count too
    assert per_part.process_output_stream(stream_args(chunk(ObjectPartial({"a": "b c d e f"})), state)) is None


def test_output_result_cuts_the_first_overflowing_text_and_empties_the_rest() -> None:
    limiter = TokenLimiter(5)
    first = assistant("hello world", "one two three four five six")
    second = assistant("more text", call("c1", "search"))
    ml = MessageList()
    ml.extend([first, second], "response")
    args = ProcessOutputResultArgs(messages=ml.get_response(), message_list=ml, result=OutputResult())
    out = limiter.process_output_result(args)
    assert out is not None
    assert [p.text for p in out[0].parts if isinstance(p, TextPart)] == ["hello world", "one two three"]
    assert limiter.count_tokens("hello world") + limiter.count_tokens("one two three") == 5
    assert [p.text for p in out[1].parts if isinstance(p, TextPart)] == [""]
    assert isinstance(out[1].parts[1], ToolCallPart)
    assert first.parts[1] == TextPart("one two three four five six")  # originals untouched
    with pytest.raises(TripWire, match="Token limit of 5 exceeded"):
        TokenLimiter(5, strategy="abort").process_output_result(args)


# ---------------------------------------------------------------- ToolCallFilter


def conversation() -> tuple[MessageList, list[Message]]:
    """History (memory) with two tool steps, this call's input, and this loop's responses."""
    ml = MessageList([Message.system("Be helpful.")])
    history = [
        user("weather in Paris?"),
        assistant("checking", call("h1", "weather"), result("h1", "weather", {"temp": 20})),
        assistant(call("h2", "calculator", {"expr": "1+1"}), result("h2", "calculator", 2)),
        assistant("It is 20 degrees."),
    ]
    ml.extend(history, "memory")
    ml.add(user("and in Rome?"), "input")
    ml.extend(
        [
            assistant(call("r1", "weather"), result("r1", "weather", {"temp": 25})),
            assistant("also", call("r2", "search"), result("r2", "search", ["a"])),
            assistant(call("r3", "weather"), result("r3", "weather", {"temp": 26})),
        ],
        "response",
    )
    return ml, [*ml.system_messages, *ml.get_all()]


def tool_ids(prompt: list[Message]) -> list[str]:
    return [p.tool_call_id for m in prompt for p in m.parts if isinstance(p, ToolCallPart | ToolResultPart)]


def filtered(processor: ToolCallFilter, prompt: list[Message], ml: MessageList | None) -> list[Message]:
    out = processor.process_llm_request(llm_args(prompt, ml))
    assert out is not None and out.prompt is not None
    return out.prompt


def test_default_filters_history_tool_calls_and_keeps_the_current_loop() -> None:
    ml, prompt = conversation()
    stored = copy.deepcopy(ml.get_all())
    out = filtered(ToolCallFilter(), prompt, ml)
    assert tool_ids(out) == ["r1", "r1", "r2", "r2", "r3", "r3"]
    texts_left = [m.text for m in out]
    assert "checking" in texts_left  # the text of a filtered message stays
    assert len(out) == len(prompt) - 1  # the calculator-only message is gone
    # Only the prompt changed: the stored messages and the given prompt are untouched.
    assert ml.get_all() == stored
    assert tool_ids(prompt) == ["h1", "h1", "h2", "h2", "r1", "r1", "r2", "r2", "r3", "r3"]


def test_exclude_filters_only_the_named_tools() -> None:
    ml, prompt = conversation()
    out = filtered(ToolCallFilter(exclude=["calculator"]), prompt, ml)
    assert tool_ids(out) == ["h1", "h1", "r1", "r1", "r2", "r2", "r3", "r3"]
    assert ToolCallFilter(exclude=[]).process_llm_request(llm_args(prompt, ml)) is None


def test_filter_after_tool_steps_keeps_only_the_most_recent_tool_steps() -> None:
    ml, prompt = conversation()
    out = filtered(ToolCallFilter(filter_after_tool_steps=2), prompt, ml)
    assert tool_ids(out) == ["r2", "r2", "r3", "r3"]
    out = filtered(ToolCallFilter(filter_after_tool_steps=1), prompt, ml)
    assert tool_ids(out) == ["r3", "r3"]
    assert "also" in [m.text for m in out]
    out = filtered(ToolCallFilter(filter_after_tool_steps=0), prompt, ml)
    assert tool_ids(out) == []
    # With exclude, only the named tools of the older steps go.
    out = filtered(ToolCallFilter(filter_after_tool_steps=1, exclude=["weather"]), prompt, ml)
    assert tool_ids(out) == ["h2", "h2", "r2", "r2", "r3", "r3"]


def test_preserve_model_output_keeps_a_compact_note_instead_of_raw_args_and_results() -> None:
    ml, prompt = conversation()
    out = filtered(ToolCallFilter(preserve_model_output=True), prompt, ml)
    assert tool_ids(out) == ["r1", "r1", "r2", "r2", "r3", "r3"]
    notes = [p.text for m in out for p in m.parts if isinstance(p, TextPart) and p.text.startswith("[tool")]
    assert notes == ['[tool weather returned: {"temp":20}]', "[tool calculator returned: 2]"]
    assert not any("expr" in m.text for m in out)  # raw args are gone


def test_preserve_model_output_prefers_the_tools_model_output_and_marks_errors() -> None:
    ml = MessageList()
    failing = result("h1", "fetch", {"trace": "long"}, is_error=True)
    shaped = result("h2", "lookup", {"rows": list(range(100))})
    shaped.provider_metadata = {"agentd": {"modelOutput": "100 rows"}}
    ml.extend([user("q1"), assistant(call("h1", "fetch"), failing, call("h2", "lookup"), shaped)], "memory")
    ml.add(user("q2"), "input")
    out = filtered(ToolCallFilter(preserve_model_output=True), ml.get_all(), ml)
    assert out[1].text == '[tool fetch failed: {"trace":"long"}][tool lookup returned: 100 rows]'


def test_a_history_call_answered_in_this_call_is_kept() -> None:
    ml = MessageList()
    ml.extend([user("do it"), assistant(call("c1", "confirm"))], "memory")
    ml.add(Message(role="user", parts=[result("c1", "confirm", "yes")]), "input")
    assert ToolCallFilter().process_llm_request(llm_args(ml.get_all(), ml)) is None


def test_input_history_before_the_newest_user_message_is_filtered_too() -> None:
    ml = MessageList()
    ml.extend(
        [user("q1"), assistant(call("a", "search"), result("a", "search", 1)), assistant("done"), user("q2")],
        "input",
    )
    out = filtered(ToolCallFilter(), ml.get_all(), ml)
    assert tool_ids(out) == []
    assert [m.text for m in out] == ["q1", "done", "q2"]


def test_without_a_message_list_history_is_what_precedes_the_newest_user_message() -> None:
    prompt = [
        user("q1"),
        assistant(call("a", "search"), result("a", "search", 1)),
        user("q2"),
        assistant(call("b", "search"), result("b", "search", 2)),
    ]
    out = filtered(ToolCallFilter(), prompt, None)
    assert tool_ids(out) == ["b", "b"]


def test_tool_call_filter_options_are_validated() -> None:
    with pytest.raises(ValueError):
        ToolCallFilter(exclude="weather")
    with pytest.raises(ValueError):
        ToolCallFilter(filter_after_tool_steps=-1)


# ---------------------------------------------------------------- UnicodeNormalizer


def normalize(processor: UnicodeNormalizer, *messages: Message) -> list[Message] | None:
    ml = MessageList()
    ml.extend(messages, "input")
    return processor.process_input(ProcessInputArgs(messages=list(messages), system_messages=[], message_list=ml))


def test_nfkc_normalisation() -> None:
    fullwidth = "\uff46\uff55\uff4c\uff4c \uff57\uff49\uff44\uff54\uff48"  # "full width", fullwidth forms
    original = user(f"{fullwidth} \u2460 \ufb01ne \u338f")  # circled 1, the fi ligature, the kg sign
    out = normalize(UnicodeNormalizer(), original)
    assert out is not None and out[0].text == "full width 1 fine kg"
    assert out[0].id == original.id
    assert original.text.startswith(fullwidth)  # not mutated


def test_control_characters_are_kept_by_default_and_stripped_on_request() -> None:
    text = "a\x00b\x07c\x85 😀 é\td"
    default = UnicodeNormalizer(collapse_whitespace=False)
    assert default.normalize(text) == unicodedata_nfkc(text)
    keep_emoji = UnicodeNormalizer(strip_control_chars=True, collapse_whitespace=False)
    assert keep_emoji.normalize(text) == "abc 😀 é\td"
    no_emoji = UnicodeNormalizer(strip_control_chars=True, preserve_emojis=False, collapse_whitespace=False)
    assert no_emoji.normalize(text) == "abc  é\td"


def unicodedata_nfkc(text: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFKC", text)


def test_whitespace_collapse_and_trim() -> None:
    out = normalize(UnicodeNormalizer(), user("  one\r\n\r\n\ntwo   three\t\tfour\rfive  "))
    assert out is not None and out[0].text == "one\ntwo three four\nfive"
    untouched = UnicodeNormalizer(collapse_whitespace=False, trim=False)
    assert untouched.normalize("  a  b\n\n") == "  a  b\n\n"
    assert normalize(UnicodeNormalizer(), user("already clean")) is None
    image = Message(role="user", parts=[TextPart(" hi "), FilePart("image/png", data=b"\x89PNG")])
    out = normalize(UnicodeNormalizer(), image)
    assert out is not None and out[0].parts[0] == TextPart("hi") and out[0].parts[1] is image.parts[1]


# ---------------------------------------------------------------- BatchParts


def test_text_deltas_are_combined_per_batch_size_keeping_the_real_ids() -> None:
    processor = BatchPartsProcessor(batch_size=3)
    state: dict[str, Any] = {}
    parts = [delta("a"), delta("b"), delta("c"), delta("d")]
    out = [processor.process_output_stream(stream_args(p, state)) for p in parts]
    assert out[0] is None and out[1] is None and out[3] is None
    combined = out[2]
    assert combined is not None and isinstance(combined.payload, TextDelta)
    assert combined.payload.text == "abc" and combined.payload.id == "t1"
    assert (combined.run_id, combined.seq) == (parts[0].run_id, parts[0].seq)
    assert [c.payload for c in processor.flush(state)] == [TextDelta("t1", "d")]
    assert processor.flush(state) == []


def test_a_non_text_chunk_flushes_the_batch_and_follows_it() -> None:
    processor = BatchParts()
    start, end = chunk(TextStart("t1")), chunk(TextEnd("t1"))
    out = run_stream(processor, [start, delta("Hel"), delta("lo"), end, chunk(TextStart("t2"))])
    assert texts(out) == ["text-start", "Hello", "text-end", "text-start"]
    assert out[2] is end


def test_a_trailing_partial_batch_is_flushed_by_the_terminal_chunk() -> None:
    out = run_stream(BatchParts(batch_size=10, emit_on_non_text=False), [delta("a"), delta("b"), finish()])
    assert texts(out) == ["ab", "finish"]
    out = run_stream(BatchParts(), [delta("x"), finish()])
    assert texts(out) == ["x", "finish"]


def test_without_emit_on_non_text_non_text_chunks_wait_in_the_batch_in_order() -> None:
    processor = BatchParts(batch_size=4, emit_on_non_text=False)
    call_chunk = chunk(ToolCall(call("c1", "search")))
    out = run_stream(processor, [delta("a"), delta("b"), call_chunk, delta("c", "t2"), delta("d", "t2")])
    assert texts(out) == ["ab", "tool-call", "c"]
    assert texts(run_stream(processor, [finish()], state={"batch": []})) == ["finish"]


def test_max_wait_time_flushes_on_the_next_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(batch_parts_module.time, "monotonic", lambda: now[0])
    processor = BatchParts(batch_size=10, max_wait_time=50)
    state: dict[str, Any] = {}
    assert processor.process_output_stream(stream_args(delta("a"), state)) is None
    now[0] += 0.01
    assert processor.process_output_stream(stream_args(delta("b"), state)) is None
    now[0] += 0.05
    out = processor.process_output_stream(stream_args(delta("c"), state))
    assert out is not None and isinstance(out.payload, TextDelta) and out.payload.text == "abc"


def test_without_emit_after_extra_chunks_wait_for_flush() -> None:
    processor = BatchParts(batch_size=3, emit_on_non_text=False)
    state: dict[str, Any] = {}
    parts = [delta("a"), chunk(TextEnd("t1")), delta("b", "t2")]
    out = [processor.process_output_stream(stream_args(p, state)) for p in parts]
    assert out[:2] == [None, None] and out[2] is not None and texts([out[2]]) == ["a"]
    assert texts(processor.flush(state)) == ["text-end", "b"]


# ---------------------------------------------------------------- the registry


@pytest.mark.parametrize(
    ("name", "options", "cls"),
    [
        ("token-limiter", {"limit": 100}, TokenLimiter),
        (
            "token-limiter",
            {"limit": 100, "strategy": "abort", "countMode": "part", "trimMode": "contiguous"},
            None,
        ),
        ("tool-call-filter", {}, ToolCallFilter),
        (
            "tool-call-filter",
            {"exclude": ["a"], "filterAfterToolSteps": 2, "preserveModelOutput": True},
            None,
        ),
        ("unicode-normalizer", {"stripControlChars": True, "preserveEmojis": False}, UnicodeNormalizer),
        ("batch-parts", {"batchSize": 3, "maxWaitTime": 100, "emitOnNonText": False}, BatchPartsProcessor),
    ],
)
def test_each_processor_builds_from_the_registry(name: str, options: dict[str, Any], cls: type | None) -> None:
    processor = default_registry().build(ProcessorSpec(name, options=options))
    assert processor.id == name
    if cls is not None:
        assert type(processor) is cls
    renamed = default_registry().build(ProcessorSpec(name, id="mine", options=options))
    assert renamed.id == "mine"


def test_bad_registry_options_are_invalid_arguments() -> None:
    with pytest.raises(InvalidArgument):
        default_registry().build(ProcessorSpec("token-limiter", options={"limit": 100, "bogus": 1}))
    with pytest.raises(InvalidArgument):
        default_registry().build(ProcessorSpec("token-limiter", options={"limit": 100, "strategy": "nope"}))
    with pytest.raises(InvalidArgument):
        default_registry().build(ProcessorSpec("batch-parts", options={"batchSize": 0}))
