"""The default error processors, driven through their hooks with hand-built args,
and how they merge into a caller's error-processor list."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

import pytest

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.lanes import (
    DEFAULT_ERROR_PROCESSOR_IDS,
    DEFAULT_MAX_PROCESSOR_RETRIES,
    build_default_error_processor,
    resolve_error_processors,
    resolve_max_processor_retries,
)
from agentd.runtime.messages import (
    FilePart,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.processors.base import (
    APIErrorResult,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessLLMRequestArgs,
    Processor,
)
from agentd.runtime.processors.builtins import stream_error_retry
from agentd.runtime.processors.builtins.error_chain import iter_error_chain
from agentd.runtime.processors.builtins.error_defaults import (
    PrefillErrorHandler,
    ProviderHistoryCompat,
    StreamErrorRetryProcessor,
    UnsupportedFileHandler,
)
from agentd.runtime.processors.builtins.provider_history_compat import (
    OBSERVATIONAL_MEMORY_CONTEXT_KEY,
    CompatRule,
    model_is_provider,
    provider_of,
)
from agentd.runtime.processors.builtins.unsupported_file_handler import REJECTED_MEDIA_TYPES_STATE_KEY
from agentd.runtime.processors.catalogue import BUILTIN_FACTORIES
from agentd.runtime.processors.message_list import MessageList

COMPAT, PREFILL, FILES, SER = DEFAULT_ERROR_PROCESSOR_IDS

# ---------------------------------------------------------------- helpers


def api_args(
    error: BaseException,
    *,
    retry_count: int = 0,
    messages: list[Message] | None = None,
    state: dict[str, Any] | None = None,
    cancelled: asyncio.Event | None = None,
) -> ProcessAPIErrorArgs:
    message_list = MessageList([Message.system("be helpful")])
    message_list.extend(messages or [], "memory")
    return ProcessAPIErrorArgs(
        error=error,
        messages=message_list.get_all(),
        message_list=message_list,
        step_number=0,
        steps=[],
        retry_count=retry_count,
        state={} if state is None else state,
        cancelled=cancelled,
    )


def llm_args(
    prompt: list[Message],
    model: str,
    *,
    state: dict[str, Any] | None = None,
    request_context: dict[str, Any] | None = None,
) -> ProcessLLMRequestArgs:
    return ProcessLLMRequestArgs(
        prompt=prompt,
        model=model,
        step_number=0,
        steps=[],
        state={} if state is None else state,
        request_context=request_context or {},
    )


def retried(result: Any) -> bool:
    assert result is None or isinstance(result, APIErrorResult)
    return result is not None and result.retry


async def retried_at(processor: StreamErrorRetryProcessor, error: BaseException) -> list[int]:
    """The retry counts (0..4) at which the processor asks for a retry."""
    return [n for n in range(5) if retried(await processor.process_api_error(api_args(error, retry_count=n)))]


def tool_turn(call_id: str, name: str = "lookup") -> Message:
    """An assistant message holding a tool call and its paired result."""
    return Message(
        role="assistant",
        parts=[
            ToolCallPart(call_id, name, {"q": 1}),
            ToolResultPart(call_id, name, {"ok": True}, args={"q": 1}),
        ],
    )


def tool_ids(messages: list[Message]) -> list[tuple[str, str]]:
    return [
        (p.type, p.tool_call_id) for m in messages for p in m.parts if isinstance(p, (ToolCallPart, ToolResultPart))
    ]


# ---------------------------------------------------------------- resolution


class Custom(Processor):
    id = "custom-x"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
        return None


CallerBuilder = Callable[[], list[Any]]


def _own_ser() -> StreamErrorRetryProcessor:
    return StreamErrorRetryProcessor(max_retries=5)


@pytest.mark.parametrize(
    ("build_caller", "defaults_enabled", "expected"),
    [
        pytest.param(lambda: [], True, [COMPAT, PREFILL, FILES, SER], id="empty-gets-all-four"),
        pytest.param(lambda: [_own_ser()], True, [COMPAT, PREFILL, FILES, "own:" + SER], id="own-ser"),
        pytest.param(lambda: [Custom()], True, ["own:custom-x", COMPAT, PREFILL, FILES, SER], id="custom"),
        pytest.param(
            lambda: [Custom(), _own_ser()],
            True,
            ["own:custom-x", COMPAT, PREFILL, FILES, "own:" + SER],
            id="custom-then-own-ser",
        ),
        pytest.param(
            lambda: [_own_ser(), Custom()],
            True,
            [COMPAT, PREFILL, FILES, "own:" + SER, "own:custom-x"],
            id="own-ser-then-custom",
        ),
        pytest.param(lambda: [PrefillErrorHandler()], True, [COMPAT, "own:" + PREFILL, FILES, SER], id="own-prefill"),
        pytest.param(
            lambda: [StreamErrorRetryProcessor(), UnsupportedFileHandler(), PrefillErrorHandler(), Custom()],
            True,
            [COMPAT, "own:" + SER, "own:" + FILES, "own:" + PREFILL, "own:custom-x"],
            id="caller-order-never-rearranged",
        ),
        pytest.param(lambda: [], False, [], id="defaults-off-empty"),
        pytest.param(
            lambda: [Custom(), _own_ser()],
            False,
            ["own:custom-x", "own:" + SER],
            id="defaults-off-caller-only",
        ),
    ],
)
def test_resolve_error_processors(build_caller: CallerBuilder, defaults_enabled: bool, expected: list[str]) -> None:
    caller = build_caller()
    snapshot = list(caller)
    first = resolve_error_processors(caller, defaults_enabled=defaults_enabled)
    second = resolve_error_processors(caller, defaults_enabled=defaults_enabled)

    assert caller == snapshot  # the caller's list is not modified
    for resolved in (first, second):
        described = [f"own:{p.id}" if any(p is c for c in caller) else p.id for p in resolved]
        assert described == expected
    # Defaults are fresh instances on every call; the caller's own are reused as given.
    added_first = [p for p in first if not any(p is c for c in caller)]
    added_second = [p for p in second if not any(p is c for c in caller)]
    assert not any(a is b for a in added_first for b in added_second)
    assert all(type(p).__name__ != "Custom" for p in added_first)


def test_resolution_factory_constants_and_cap() -> None:
    built: list[str] = []

    def factory(default_id: str) -> Any:
        built.append(default_id)
        return build_default_error_processor(default_id)

    resolved = resolve_error_processors([PrefillErrorHandler()], factory=factory)
    assert [p.id for p in resolved] == list(DEFAULT_ERROR_PROCESSOR_IDS)
    assert built == [COMPAT, FILES, SER]
    with pytest.raises(ValueError, match="ids differ"):
        resolve_error_processors([], factory=lambda _id: Custom())
    with pytest.raises(ValueError):
        build_default_error_processor("nope")

    assert DEFAULT_ERROR_PROCESSOR_IDS == (
        "provider-history-compat",
        "prefill-error-handler",
        "unsupported-file-handler",
        "stream-error-retry-processor",
    )
    assert DEFAULT_MAX_PROCESSOR_RETRIES == 3
    assert resolve_max_processor_retries(None, resolved) == 3
    assert resolve_max_processor_retries(None, []) is None
    assert resolve_max_processor_retries(7, []) == 7
    names = {p.id: p.name for p in resolve_error_processors([])}
    assert names == {
        COMPAT: "Provider History Compat",
        PREFILL: "Prefill Error Handler",
        FILES: "Unsupported File Handler",
        SER: "Stream Error Retry Processor",
    }
    # None of the pure retry/repair handlers rewrite prompts.
    assert not hasattr(StreamErrorRetryProcessor(), "process_llm_request")
    assert not hasattr(PrefillErrorHandler(), "process_llm_request")


def test_defaults_are_registered_builtins_with_camel_case_options() -> None:
    for default_id in DEFAULT_ERROR_PROCESSOR_IDS:
        assert default_id in BUILTIN_FACTORIES
    ser = BUILTIN_FACTORIES[SER]({"maxRetries": 4, "retryBadRequests": True, "maxRetryAfterMs": 100})
    assert isinstance(ser, StreamErrorRetryProcessor)
    assert (ser.max_retries, ser.retry_bad_requests, ser.max_retry_after_ms) == (4, True, 100.0)
    with pytest.raises(InvalidArgument):
        BUILTIN_FACTORIES[SER]({"maxRetries": -1})
    with pytest.raises(InvalidArgument):
        BUILTIN_FACTORIES[SER]({"delayMs": "soon"})
    with pytest.raises(InvalidArgument):
        BUILTIN_FACTORIES[PREFILL]({"anything": 1})
    compat = BUILTIN_FACTORIES[COMPAT]({"observationalMemory": True})
    assert isinstance(compat, ProviderHistoryCompat) and compat.observational_memory is True


# ---------------------------------------------------------------- StreamErrorRetryProcessor


async def test_ser_default_max_retries_is_one() -> None:
    assert StreamErrorRetryProcessor().max_retries == 1
    error = ModelAPIError("overloaded", status_code=500, retryable=True)
    assert await retried_at(StreamErrorRetryProcessor(), error) == [0]


async def test_ser_bad_request_only_when_opted_in_and_only_once() -> None:
    bad = ModelAPIError("invalid request", status_code=400)
    assert await retried_at(StreamErrorRetryProcessor(), bad) == []
    assert await retried_at(StreamErrorRetryProcessor(max_retries=3), bad) == []
    assert await retried_at(StreamErrorRetryProcessor(retry_bad_requests=True), bad) == [0]
    assert await retried_at(StreamErrorRetryProcessor(retry_bad_requests=True, max_retries=3), bad) == [0]


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ConnectionResetError(104, "Connection reset by peer"), id="ConnectionResetError"),
        pytest.param(ModelAPIError("read ECONNRESET"), id="message-econnreset"),
        pytest.param(RuntimeError("socket hang up"), id="message-socket-hang-up"),
        pytest.param(ModelAPIError("stream broke", provider_code="ECONNRESET"), id="code-econnreset"),
    ],
)
async def test_ser_connection_resets(error: BaseException) -> None:
    assert await retried_at(StreamErrorRetryProcessor(), error) == [0]
    assert await retried_at(StreamErrorRetryProcessor(max_retries=2), error) == [0, 1]


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ModelAPIError("bad key", status_code=401, retryable=True), id="401-even-if-retryable"),
        pytest.param(ModelAPIError("nope", status_code=403), id="403"),
        pytest.param(ModelAPIError("nope", provider_code="invalid_api_key"), id="code-invalid_api_key"),
        pytest.param(ModelAPIError("nope", details={"error": {"type": "authentication_error"}}), id="details-type"),
        pytest.param(
            ModelAPIError("nope", details={"response_body": '{"error": {"code": "permission_denied"}}'}),
            id="response-body-code",
        ),
    ],
)
async def test_ser_never_retries_terminal_auth_errors(error: BaseException) -> None:
    assert await retried_at(StreamErrorRetryProcessor(max_retries=3), error) == []
    assert await retried_at(StreamErrorRetryProcessor(max_retries=3, retry_unknown_errors=True), error) == []
    wrapped = RuntimeError("stream failed")
    wrapped.__cause__ = error
    assert await retried_at(StreamErrorRetryProcessor(retry_unknown_errors=True), wrapped) == []


async def test_ser_500_retryable_up_to_max_then_stops() -> None:
    error = ModelAPIError("Internal server error", status_code=500, retryable=True)
    assert await retried_at(StreamErrorRetryProcessor(max_retries=2), error) == [0, 1]
    assert await retried_at(StreamErrorRetryProcessor(max_retries=0), error) == []


@pytest.mark.parametrize(
    "error",
    [
        pytest.param(ModelAPIError("slow down", status_code=429), id="429"),
        pytest.param(ModelAPIError("bad gateway", status_code=502), id="502-without-flag"),
        pytest.param(ModelAPIError("x", provider_code="rate_limit_exceeded"), id="code-rate-limit"),
        pytest.param(ModelAPIError("x", details={"error": {"type": "overloaded_error"}}), id="details-overloaded"),
        pytest.param(
            ModelAPIError("x", details={"type": "response.failed", "code": "server_error"}), id="server-error"
        ),
        pytest.param(ModelAPIError("An error occurred while processing. You can retry your request."), id="retry-hint"),
    ],
)
async def test_ser_transient_errors(error: BaseException) -> None:
    assert await retried_at(StreamErrorRetryProcessor(), error) == [0]


async def test_ser_unknown_errors_only_when_opted_in() -> None:
    error = ValueError("something odd")
    assert await retried_at(StreamErrorRetryProcessor(max_retries=2), error) == []
    assert await retried_at(StreamErrorRetryProcessor(max_retries=2, retry_unknown_errors=True), error) == [
        0,
        1,
    ]
    plain_400 = ModelAPIError("invalid", status_code=400)
    assert await retried_at(StreamErrorRetryProcessor(retry_unknown_errors=True), plain_400) == [0]


async def test_ser_cause_chain_is_searched_and_cycle_safe() -> None:
    inner = ModelAPIError("upstream hiccup", retryable=True)
    try:
        try:
            raise inner
        except ModelAPIError as exc:
            raise RuntimeError("stream failed") from exc
    except RuntimeError as outer:
        explicit = outer
    assert await retried_at(StreamErrorRetryProcessor(), explicit) == [0]

    implicit = RuntimeError("while handling")
    implicit.__context__ = ModelAPIError("upstream hiccup", retryable=True)  # implicit chaining only
    assert await retried_at(StreamErrorRetryProcessor(), implicit) == [0]

    a, b = RuntimeError("a"), RuntimeError("b")
    a.__cause__, b.__cause__ = b, a
    assert [str(e) for e in iter_error_chain(a)] == ["a", "b"]
    assert await retried_at(StreamErrorRetryProcessor(), a) == []
    b.__context__ = ModelAPIError("deep", status_code=503)
    assert await retried_at(StreamErrorRetryProcessor(), a) == [0]


async def test_ser_matchers_and_delays() -> None:
    delays: list[float] = []

    def record(_args: ProcessAPIErrorArgs, delay: float) -> None:
        delays.append(delay)

    quota = ModelAPIError("quota exhausted for project", status_code=400)
    processor = StreamErrorRetryProcessor(
        matchers=[
            {"match": lambda e: "quota" in str(e), "maxRetries": 3, "delayMs": 1},
            r"flaky\s+backend",
        ],
        on_retry=record,
    )
    assert await retried_at(processor, quota) == [0, 1, 2]
    assert delays == [1.0, 1.0, 1.0]
    assert await retried_at(processor, RuntimeError("Flaky  backend")) == [0]

    # A raising matcher counts as no match.
    def boom(_e: BaseException) -> bool:
        raise KeyError("bug")

    assert await retried_at(StreamErrorRetryProcessor(matchers=[boom]), RuntimeError("x")) == []

    for configured in (-5, float("inf"), float("nan")):
        delays.clear()
        ser = StreamErrorRetryProcessor(delay_ms=configured, on_retry=record)
        assert retried(await ser.process_api_error(api_args(ModelAPIError("x", status_code=503))))
        assert delays == [0.0]

    delays.clear()
    ser = StreamErrorRetryProcessor(delay_ms=lambda a: 2 + a.retry_count, on_retry=record, max_retries=2)
    await ser.process_api_error(api_args(ModelAPIError("x", status_code=503), retry_count=1))
    assert delays == [3.0]

    with pytest.raises(ValueError):
        StreamErrorRetryProcessor(matchers=[{"match": "x", "bogus": 1}])
    with pytest.raises(ValueError):
        StreamErrorRetryProcessor(matchers=[{"maxRetries": 1}])


async def test_ser_retry_after_is_honoured_and_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    delays: list[float] = []
    slept: list[float] = []
    sleep = asyncio.sleep

    def record(_args: ProcessAPIErrorArgs, delay: float) -> None:
        delays.append(delay)

    async def waited(seconds: float) -> None:
        slept.append(seconds)
        await sleep(0)

    # What the processor waits, seen by the wait itself (not measured on a clock).
    monkeypatch.setattr(stream_error_retry.asyncio, "sleep", waited)

    async def delay_for(error: ModelAPIError, **options: Any) -> float:
        delays.clear()
        slept.clear()
        ser = StreamErrorRetryProcessor(on_retry=record, **options)
        assert retried(await ser.process_api_error(api_args(error)))
        assert slept == [delays[0] / 1000]  # it waited the delay it announced, before the retry
        return delays[0]

    limited = ModelAPIError("slow down", status_code=429, details={"retry_after_ms": 30})
    assert await delay_for(limited) == 30.0
    assert await delay_for(limited, delay_ms=5) == 30.0
    assert await delay_for(limited, delay_ms=50) == 50.0  # the larger of the two
    seconds = ModelAPIError("slow down", status_code=429, details={"headers": {"Retry-After": "0.02"}})
    assert await delay_for(seconds) == 20.0
    huge = ModelAPIError("slow down", status_code=429, details={"retry-after": 3600})
    assert await delay_for(huge, max_retry_after_ms=25) == 25.0
    assert StreamErrorRetryProcessor().max_retry_after_ms == 30_000


@pytest.mark.timeout(30)
async def test_ser_wait_is_abortable_and_messages_untouched() -> None:
    cancelled = asyncio.Event()
    message = Message.user("hello")
    args = api_args(ModelAPIError("x", status_code=503), messages=[message], cancelled=cancelled)
    before = copy.deepcopy(args.message_list.get_all())
    ser = StreamErrorRetryProcessor(delay_ms=60_000)
    asyncio.get_running_loop().call_later(0.02, cancelled.set)
    # Ended by the cancel, well before its 60 s wait (the test's timeout is shorter).
    assert await ser.process_api_error(args) is None
    assert args.message_list.get_all() == before

    assert (
        await StreamErrorRetryProcessor().process_api_error(
            api_args(ModelAPIError("x", status_code=503), cancelled=cancelled)
        )
        is None
    )
    result = await StreamErrorRetryProcessor().process_api_error(
        api_args(ModelAPIError("x", status_code=503), messages=[message])
    )
    assert result == APIErrorResult(retry=True)


# ---------------------------------------------------------------- PrefillErrorHandler

PREFILL_ERROR = "This model does not support assistant message prefill. The conversation must end with a user message."


def test_prefill_appends_reminder_and_retries_on_first_attempt_only() -> None:
    handler = PrefillErrorHandler()
    history = [Message.user("hi"), Message(role="assistant", parts=[TextPart("Sure, ")], thread_id="t1")]

    args = api_args(ModelAPIError(PREFILL_ERROR, status_code=400), messages=history)
    assert handler.process_api_error(args) == APIErrorResult(retry=True)
    added = args.message_list.get_all()[-1]
    assert len(args.message_list) == 3
    assert added.role == "user"
    assert [(p.type, getattr(p, "text", None)) for p in added.parts] == [
        ("text", "<system-reminder>continue</system-reminder>")
    ]
    assert added.metadata == {"systemReminder": {"type": "anthropic-prefill-processor-retry"}}
    assert args.message_list.source_of(added.id) == "input"
    assert added.thread_id == "t1"

    later = api_args(ModelAPIError(PREFILL_ERROR, status_code=400), messages=history, retry_count=1)
    assert handler.process_api_error(later) is None
    assert len(later.message_list) == 2

    unrelated = api_args(ModelAPIError("context length exceeded", status_code=400), messages=history)
    assert handler.process_api_error(unrelated) is None
    assert len(unrelated.message_list) == 2


def test_prefill_is_found_case_insensitively_inside_a_chain() -> None:
    wrapped = RuntimeError("model call failed")
    wrapped.__cause__ = ModelAPIError(PREFILL_ERROR.upper())
    args = api_args(wrapped, messages=[Message.user("hi")])
    assert retried(PrefillErrorHandler().process_api_error(args))


# ---------------------------------------------------------------- ProviderHistoryCompat


def _stored_with_tool_ids(*call_ids: str) -> MessageList:
    message_list = MessageList([Message.system("sys")])
    message_list.add(Message.user("look it up"), "memory")
    for call_id in call_ids:
        message_list.add(tool_turn(call_id), "memory")
    return message_list


def test_compat_rewrites_non_matching_anthropic_tool_ids_in_the_prompt_only() -> None:
    stored = _stored_with_tool_ids("call.1", "call_1", "ok-id_2", "fn:lookup/3")
    # A separate result message for one more call, as other runtimes store it.
    stored.add(Message(role="assistant", parts=[ToolCallPart("x y", "lookup")]), "memory")
    stored.add(Message(role="user", parts=[ToolResultPart("x y", "lookup", "done")]), "memory")
    prompt = [*stored.system_messages, *stored.get_all()]  # the same objects as the stored history
    originals = copy.deepcopy(stored.get_all())
    prompt_before = copy.deepcopy(prompt)

    result = ProviderHistoryCompat().process_llm_request(llm_args(prompt, "anthropic/model-a"))

    assert isinstance(result, LLMRequestResult) and result.prompt is not None
    assert tool_ids(result.prompt) == [
        ("tool-call", "call_1_2"),
        ("tool-result", "call_1_2"),
        ("tool-call", "call_1"),
        ("tool-result", "call_1"),
        ("tool-call", "ok-id_2"),
        ("tool-result", "ok-id_2"),
        ("tool-call", "fn_lookup_3"),
        ("tool-result", "fn_lookup_3"),
        ("tool-call", "x_y"),
        ("tool-result", "x_y"),
    ]
    assert stored.get_all() == originals  # persisted history keeps the original ids
    assert prompt == prompt_before
    assert tool_ids(stored.get_all())[0] == ("tool-call", "call.1")


def test_compat_returns_none_when_nothing_needs_changing() -> None:
    compat = ProviderHistoryCompat()
    stored = _stored_with_tool_ids("call_1", "toolu_01AbC-9")
    prompt = [*stored.system_messages, *stored.get_all()]
    assert compat.process_llm_request(llm_args(prompt, "anthropic/model-a")) is None
    assert compat.process_llm_request(llm_args(prompt, "anthropic:model-a")) is None
    # Other providers accept any id: no pre-emptive rewrite.
    bad = _stored_with_tool_ids("call.1")
    bad_prompt = [*bad.system_messages, *bad.get_all()]
    assert compat.process_llm_request(llm_args(bad_prompt, "other/model-x")) is None
    assert compat.process_llm_request(llm_args(bad_prompt, "local/echo")) is None


def test_compat_reactive_tool_id_recovery_for_unidentified_providers() -> None:
    compat = ProviderHistoryCompat()
    state: dict[str, Any] = {}
    history = [Message.user("look it up"), tool_turn("call.1")]
    error = ModelAPIError(
        "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'", status_code=400
    )
    args = api_args(error, messages=history, state=state)
    originals = copy.deepcopy(args.message_list.get_all())

    assert compat.process_api_error(api_args(error, messages=history, retry_count=1)) is None
    assert compat.process_api_error(args) == APIErrorResult(retry=True)
    assert args.message_list.get_all() == originals  # recovery is prompt-only

    prompt = [*args.message_list.system_messages, *args.message_list.get_all()]
    result = compat.process_llm_request(llm_args(prompt, "proxy/model-a", state=state))
    assert result is not None and result.prompt is not None
    assert tool_ids(result.prompt) == [("tool-call", "call_1"), ("tool-result", "call_1")]
    assert args.message_list.get_all() == originals
    # The same rejection again is not retried a second time.
    assert compat.process_api_error(api_args(error, messages=history, state=state)) is None
    # A matching error with nothing to fix is not retried.
    fine = api_args(error, messages=[Message.user("hi"), tool_turn("call_1")])
    assert compat.process_api_error(fine) is None


def test_compat_reasoning_rules() -> None:
    compat = ProviderHistoryCompat()
    thinking_only = Message(role="assistant", parts=[ReasoningPart("hmm")])
    mixed = Message(
        role="assistant",
        parts=[
            ReasoningPart("signed", signature="sig"),
            ReasoningPart("", signature="sig-empty"),
            ReasoningPart("", redacted_data=b"opaque"),
            ReasoningPart("from elsewhere", provider_options={"other": {"itemId": "rs_1"}}),
            ReasoningPart("tagged", provider_options={"anthropic": {"signature": "s"}}),
            TextPart("answer"),
        ],
    )
    prompt = [Message.system("sys"), Message.user("q"), thinking_only, mixed]
    before = copy.deepcopy(prompt)

    cerebras = compat.process_llm_request(llm_args(prompt, "cerebras/model-c"))
    assert cerebras is not None and cerebras.prompt is not None
    assert [m.role for m in cerebras.prompt] == ["system", "user", "assistant"]
    assert [p.type for p in cerebras.prompt[-1].parts] == ["text"]

    anthropic = compat.process_llm_request(llm_args(prompt, "anthropic/model-b"))
    assert anthropic is not None and anthropic.prompt is not None
    assert [m.role for m in anthropic.prompt] == ["system", "user", "assistant"]  # unsigned-only turn dropped
    kept = anthropic.prompt[-1].parts
    assert [getattr(p, "text", None) for p in kept if isinstance(p, ReasoningPart)] == [
        "signed",
        "",
        "tagged",
    ]
    assert any(isinstance(p, ReasoningPart) and p.redacted_data for p in kept)

    assert compat.process_llm_request(llm_args(prompt, "other/model-x")) is None
    assert prompt == before


def test_compat_azure_reminder_rename_needs_observational_memory() -> None:
    prompt = [
        Message.system('<system-reminder type="memory">facts</system-reminder>'),
        Message.user("<system-reminder>note</system-reminder> hello"),
        Message(role="assistant", parts=[TextPart("<system-reminder>kept</system-reminder>")]),
    ]
    before = copy.deepcopy(prompt)
    assert ProviderHistoryCompat().process_llm_request(llm_args(prompt, "azure/model-y")) is None

    flagged = ProviderHistoryCompat(observational_memory=True).process_llm_request(
        llm_args(prompt, "azure-other/model-x")
    )
    by_context = ProviderHistoryCompat().process_llm_request(
        llm_args(prompt, "azure:model-y", request_context={OBSERVATIONAL_MEMORY_CONTEXT_KEY: True})
    )
    for result in (flagged, by_context):
        assert result is not None and result.prompt is not None
        assert [m.text for m in result.prompt] == [
            '<memory-context type="memory">facts</memory-context>',
            "<memory-context>note</memory-context> hello",
            "<system-reminder>kept</system-reminder>",
        ]
    assert prompt == before
    off = ProviderHistoryCompat(observational_memory=False).process_llm_request(
        llm_args(prompt, "azure/model-y", request_context={OBSERVATIONAL_MEMORY_CONTEXT_KEY: True})
    )
    assert off is None
    not_azure = ProviderHistoryCompat(observational_memory=True).process_llm_request(llm_args(prompt, "other/model-x"))
    assert not_azure is None


def test_compat_additional_rules_and_provider_detection() -> None:
    fixed: list[int] = []

    def fix(messages: list[Message]) -> bool:
        fixed.append(len(messages))
        messages[-1].parts.append(TextPart("!"))
        return True

    def shout(prompt: list[Message], _model: Any) -> list[Message] | None:
        return [Message(role=m.role, parts=[TextPart(m.text.upper())], id=m.id) for m in prompt]

    compat = ProviderHistoryCompat(
        additional_rules=[
            CompatRule(name="custom-fix", error_patterns=(r"weird\s+history",), fix=fix),
            {"name": "shout", "applyToPrompt": shout, "providers": ["acme"]},
        ]
    )
    assert [r.name for r in compat.rules][-2:] == ["custom-fix", "shout"]
    args = api_args(ModelAPIError("Weird history found"), messages=[Message.user("hi")])
    assert compat.process_api_error(args) == APIErrorResult(retry=True)
    assert fixed == [1] and args.message_list.get_all()[-1].text == "hi!"
    assert compat.process_api_error(api_args(ModelAPIError("other"), messages=[Message.user("hi")])) is None

    prompt = [Message.user("hi")]
    shouted = compat.process_llm_request(llm_args(prompt, "acme.chat/model-1"))
    assert shouted is not None and shouted.prompt is not None and shouted.prompt[0].text == "HI"
    assert prompt[0].text == "hi"
    assert compat.process_llm_request(llm_args(prompt, "acmex/model-1")) is None

    with pytest.raises(ValueError, match="duplicate"):
        ProviderHistoryCompat(additional_rules=[CompatRule(name="cerebras-reasoning")])
    assert provider_of("anthropic/model-a") == "anthropic"
    assert provider_of("Anthropic:model-a") == "anthropic"
    assert provider_of("model-a") is None
    assert model_is_provider("azure-hosted/model-y", "azure")
    assert model_is_provider(["other/model-x", "anthropic/model-a"], "anthropic")
    assert not model_is_provider("anthropicish/model-a", "anthropic")


# ---------------------------------------------------------------- UnsupportedFileHandler


def _with_files() -> list[Message]:
    return [
        Message(
            role="user",
            parts=[
                TextPart("what is in these?"),
                FilePart("application/zip", data=b"PK", filename="bundle.zip"),
                FilePart("image/png", url="https://example.test/a.png"),
                FilePart("audio/wav", data=b"RIFF"),
            ],
        ),
        Message(role="assistant", parts=[TextPart("let me see")]),
    ]


def test_unsupported_file_named_media_type_then_placeholders_in_prompt_only() -> None:
    handler = UnsupportedFileHandler()
    state: dict[str, Any] = {}
    messages = _with_files()
    error = RuntimeError("model call failed")
    error.__cause__ = ModelAPIError("Unsupported media type: application/zip", status_code=400)
    args = api_args(error, messages=messages, state=state)
    stored_before = copy.deepcopy(args.message_list.get_all())

    assert handler.process_llm_request(llm_args(args.message_list.get_all(), "other/model-x", state=state)) is None
    assert handler.process_api_error(args) == APIErrorResult(retry=True)
    assert state[REJECTED_MEDIA_TYPES_STATE_KEY] == ["application/zip"]

    prompt = [Message.system("sys"), *args.message_list.get_all()]
    result = handler.process_llm_request(llm_args(prompt, "other/model-x", state=state))
    assert result is not None and result.prompt is not None
    user = result.prompt[1]
    assert [(p.type, getattr(p, "text", None)) for p in user.parts] == [
        ("text", "what is in these?"),
        ("text", "[Attachment unavailable: bundle.zip]"),
        ("file", None),
        ("text", "[Attachment unavailable: audio/wav]"),
    ]
    assert result.prompt[2] is prompt[2]
    assert args.message_list.get_all() == stored_before  # stored messages keep their files

    # Neither a repeat of the same rejection nor a later attempt is retried.
    assert handler.process_api_error(api_args(error, messages=messages, state=state)) is None
    assert handler.process_api_error(api_args(error, messages=messages, retry_count=1)) is None


def test_unsupported_file_details_and_generic_rejection() -> None:
    handler = UnsupportedFileHandler()
    state: dict[str, Any] = {}
    by_details = ModelAPIError("bad file", status_code=415, details={"unsupported_media_type": "Image/PNG"})
    assert retried(handler.process_api_error(api_args(by_details, messages=_with_files(), state=state)))
    assert state[REJECTED_MEDIA_TYPES_STATE_KEY] == ["image/png"]
    result = handler.process_llm_request(llm_args(_with_files(), "anthropic/model-a", state=state))
    assert result is not None and result.prompt is not None
    assert [p.type for p in result.prompt[0].parts] == ["text", "text", "text", "text"]

    generic_state: dict[str, Any] = {}
    rejected = ModelAPIError("Invalid request", status_code=400)
    assert retried(handler.process_api_error(api_args(rejected, messages=_with_files(), state=generic_state)))
    assert generic_state[REJECTED_MEDIA_TYPES_STATE_KEY] == ["*"]

    images_only = [Message(role="user", parts=[FilePart("image/png", data=b"x"), TextPart("?")])]
    assert handler.process_api_error(api_args(rejected, messages=images_only)) is None
    no_files = [Message.user("hi")]
    assert handler.process_api_error(api_args(by_details, messages=no_files)) is None
    transient = ModelAPIError("overloaded", status_code=503, retryable=True)
    assert handler.process_api_error(api_args(transient, messages=_with_files())) is None
