"""ResponseCache through the runtime API: the real agent loop, the local scripted
model (model calls counted) and an InMemoryServerCache on a fake clock."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agentd.runtime import Agent, Message, TextPart, tool
from agentd.runtime.agent_definition import RESPONSE_CACHE_KEY
from agentd.runtime.cache import CacheError, InMemoryServerCache
from agentd.runtime.chunks import Chunk, StepStart, Usage
from agentd.runtime.messages import FilePart, ToolCallPart, ToolResultPart
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.options import NO_SCOPE, MemoryOptions, ProcessorSpec, ResponseCacheOptions
from agentd.runtime.processors.base import (
    APIErrorResult,
    CachedLLMResponse,
    ProcessAPIErrorArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    Processor,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
)
from agentd.runtime.processors.builtins.response_cache import (
    DEFAULT_AGENT_ID,
    DEFAULT_RESPONSE_CACHE_TTL_SECONDS,
    RESPONSE_CACHE_CONTEXT_KEY,
    ResponseCache,
    response_cache_factory,
)
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd.runtime.response_keys import (
    MODEL_SPEC_VERSION,
    ModelIdentity,
    ResponseCacheKeyInputs,
    build_response_cache_key,
    canonical_prompt,
    key_prefix,
    matches_unscoped,
    scope_tag,
)
from agentd.runtime.unset import UNSET
from support.clocks import Clock
from support.runs import LocalModelSpy, run, script

INSTRUCTIONS = "You answer questions concisely."
QUESTION = "What is the capital of France?"

# ---------------------------------------------------------------- helpers


class ModelCalls(LocalModelSpy):
    """Counts calls of the local model (a cache hit makes none)."""

    @property
    def count(self) -> int:
        return len(self.requests)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> ModelCalls:
    return ModelCalls(monkeypatch)


def make_agent(cache: InMemoryServerCache, **options: Any) -> Agent:
    fields_ = {k: options.pop(k) for k in list(options) if k in {"tools", "output_processors", "error_processors"}}
    fields_.setdefault("error_processor_defaults", False)
    return Agent(
        id="search-agent",
        model="local/scripted",
        instructions=INSTRUCTIONS,
        input_processors=[ResponseCache(cache, **options)],
        **fields_,
    )


def say(text: str, **extra: Any) -> dict[str, Any]:
    return {"text": text, **extra}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------- hits and replays


async def test_second_identical_call_is_served_from_the_cache(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)
    opts = script(say("Paris.", usage={"inputTokens": 12, "outputTokens": 2}))
    first = await run(agent, QUESTION, opts)
    assert calls.count == 1
    second = await run(agent, QUESTION, opts)
    assert calls.count == 1  # replayed

    assert second.result.text == first.result.text == "Paris."
    assert second.result.usage == first.result.usage
    assert second.result.finish_reason == first.result.finish_reason == "stop"
    assert second.types == first.types
    assert [s.from_cache for s in first.result.steps] == [False]
    assert [s.from_cache for s in second.result.steps] == [True]
    starts = [c.payload for c in first.chunks + second.chunks if isinstance(c.payload, StepStart)]
    assert starts[0].started_at is not None
    assert starts[1].started_at is None  # no provider call happened
    assert len(await cache.keys(key_prefix(DEFAULT_AGENT_ID))) == 1
    assert cache.stats.hits == 1 and cache.stats.writes == 1


async def test_a_tool_calling_reply_replays_without_running_the_tool(
    cache: InMemoryServerCache, calls: ModelCalls
) -> None:
    executed = 0

    @tool("lookup", "Looks a capital up")
    def lookup(args: Any) -> Any:
        nonlocal executed
        executed += 1
        return {"capital": "Paris"}

    agent = make_agent(cache, tools=[lookup])
    opts = script({"toolCalls": [{"id": "c1", "name": "lookup", "args": {"country": "France"}}]}, say("Paris."))
    first = await run(agent, QUESTION, opts)
    assert (executed, calls.count) == (1, 2)
    second = await run(agent, QUESTION, opts)
    assert (executed, calls.count) == (1, 2)  # neither the tool nor the model ran again

    assert second.result.text == first.result.text == "Paris."
    assert [s.from_cache for s in second.result.steps] == [True, True]
    assert [(r.tool_call_id, r.result) for r in second.result.tool_results] == [("c1", {"capital": "Paris"})]
    assert second.types == first.types


async def test_each_step_of_a_tool_loop_has_its_own_entry(cache: InMemoryServerCache) -> None:
    @tool("lookup", "Looks a capital up")
    def lookup(args: Any) -> Any:
        return "Paris"

    agent = make_agent(cache, tools=[lookup])
    await run(agent, QUESTION, script({"toolCalls": [{"id": "c1", "name": "lookup", "args": {}}]}, say("Paris.")))
    keys = await cache.keys(key_prefix(DEFAULT_AGENT_ID))
    assert len(keys) == 2
    entries = [await cache.get(k) for k in keys]
    assert all(isinstance(e, CachedLLMResponse) for e in entries)
    with_tools = [e for e in entries if e.tool_results]
    assert len(with_tools) == 1 and with_tools[0].tool_results[0].result == "Paris"
    finishes = sorted(next(c for c in e.chunks if isinstance(c, ModelFinish)).finish_reason for e in entries)
    assert finishes == ["stop", "tool-calls"]


async def test_bust_calls_the_model_and_rewrites_the_entry(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)
    await run(agent, QUESTION, script(say("old")))
    busted = await run(agent, QUESTION, script(say("new"), request_context=ResponseCache.context(bust=True)))
    assert calls.count == 2 and busted.result.text == "new"
    again = await run(agent, QUESTION, script(say("never sent")))
    assert calls.count == 2 and again.result.text == "new"
    # The RPC form of the same override.
    await run(agent, QUESTION, script(say("newest"), response_cache=ResponseCacheOptions(bust=True)))
    assert calls.count == 3
    assert (await run(agent, QUESTION, script(say("never sent")))).result.text == "newest"
    assert len(await cache.keys()) == 1


async def test_constructor_bust_never_reads(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, bust=True)
    await run(agent, QUESTION, script(say("a")))
    await run(agent, QUESTION, script(say("a")))
    assert calls.count == 2 and cache.stats.hits == 0 and cache.stats.writes == 2


# ---------------------------------------------------------------- scopes


async def test_resource_ids_never_share_an_entry_by_default(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)
    u1 = script(say("for u1"), memory=MemoryOptions(resource="u1"))
    u2 = script(say("for u2"), memory=MemoryOptions(resource="u2"))
    assert (await run(agent, QUESTION, u1)).result.text == "for u1"
    assert (await run(agent, QUESTION, u2)).result.text == "for u2"
    assert calls.count == 2
    assert (await run(agent, QUESTION, script(say("x"), memory=MemoryOptions(resource="u1")))).result.text == "for u1"
    assert calls.count == 2
    u1_keys = await cache.keys(key_prefix(DEFAULT_AGENT_ID, "u1"))
    assert len(u1_keys) == 1 and u1_keys[0].startswith(f"agentd:agent-response:{DEFAULT_AGENT_ID}:{sha('u1')[:8]}:")
    assert len(await cache.keys(key_prefix(DEFAULT_AGENT_ID, "u2"))) == 1
    assert not [k for k in await cache.keys() if matches_unscoped(k, DEFAULT_AGENT_ID)]


async def test_an_explicit_scope_shares_across_resources(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, scope="org-123")
    await run(agent, QUESTION, script(say("shared"), memory=MemoryOptions(resource="u1")))
    second = await run(agent, QUESTION, script(say("x"), memory=MemoryOptions(resource="u2")))
    assert calls.count == 1 and second.result.text == "shared"
    assert len(await cache.keys(key_prefix(DEFAULT_AGENT_ID, "org-123"))) == 1


async def test_a_per_call_scope_overrides_the_constructor(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, scope="org-123")
    await run(agent, QUESTION, script(say("a"), response_cache=ResponseCacheOptions(scope="org-456")))
    assert len(await cache.keys(key_prefix(DEFAULT_AGENT_ID, "org-456"))) == 1
    assert await cache.keys(key_prefix(DEFAULT_AGENT_ID, "org-123")) == []


async def test_explicit_no_scope_shares_across_everyone(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)
    unscoped = ResponseCacheOptions(scope=NO_SCOPE)
    await run(agent, QUESTION, script(say("public"), memory=MemoryOptions(resource="u1"), response_cache=unscoped))
    second = await run(agent, QUESTION, script(say("x"), memory=MemoryOptions(resource="u2"), response_cache=unscoped))
    third = await run(agent, QUESTION, script(say("x")))  # no resource, no override: unscoped too
    assert calls.count == 1 and second.result.text == third.result.text == "public"
    keys = await cache.keys()
    assert len(keys) == 1 and matches_unscoped(keys[0], DEFAULT_AGENT_ID)
    # The context-helper form of the same override, over a resource.
    ctx = ResponseCache.context(scope=None)
    fourth = await run(agent, QUESTION, script(say("x"), memory=MemoryOptions(resource="u3"), request_context=ctx))
    assert calls.count == 1 and fourth.result.text == "public"


async def test_constructor_scope_none_ignores_the_resource(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, scope=None)
    await run(agent, QUESTION, script(say("public"), memory=MemoryOptions(resource="u1")))
    await run(agent, QUESTION, script(say("x"), memory=MemoryOptions(resource="u2")))
    assert calls.count == 1


# ---------------------------------------------------------------- keys


async def test_a_custom_key_function(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    seen: list[ResponseCacheKeyInputs] = []

    def key(inputs: ResponseCacheKeyInputs) -> str:
        seen.append(inputs)
        return f"faq:{inputs.scope}:{inputs.step_number}"

    agent = make_agent(cache, key=key, agent_id="faq-agent")
    opts = script(say("Paris."), memory=MemoryOptions(resource="u1"))
    await run(agent, QUESTION, opts)
    await run(agent, QUESTION, opts)
    assert calls.count == 1 and await cache.keys() == ["faq:u1:0"]
    inputs = seen[0]
    assert inputs.agent_id == "faq-agent" and inputs.scope == "u1" and inputs.step_number == 0
    assert inputs.model == ModelIdentity("local", "scripted", MODEL_SPEC_VERSION)
    assert [(m.role, m.text) for m in inputs.prompt] == [("system", INSTRUCTIONS), ("user", QUESTION)]


async def test_a_per_call_async_key_function(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    async def key(inputs: ResponseCacheKeyInputs) -> str:
        return f"per-call:{inputs.step_number}"

    agent = make_agent(cache, key="constructor-key")
    await run(agent, QUESTION, script(say("a"), request_context=ResponseCache.context(key=key)))
    assert await cache.keys() == ["per-call:0"]


async def test_a_string_key_is_used_verbatim(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, key="fixed", scope="org-123")
    await run(agent, QUESTION, script(say("a")))
    await run(agent, "a different question", script(say("b")))
    assert calls.count == 1 and await cache.keys() == ["fixed"]
    await run(agent, QUESTION, script(say("c"), response_cache=ResponseCacheOptions(key="per-call")))
    assert sorted(await cache.keys()) == ["fixed", "per-call"]


async def test_a_raising_key_function_falls_back_and_still_caches(
    cache: InMemoryServerCache, calls: ModelCalls
) -> None:
    def key(inputs: ResponseCacheKeyInputs) -> str:
        raise RuntimeError("broken key function")

    def not_a_string(inputs: ResponseCacheKeyInputs) -> Any:
        return 42

    agent = make_agent(cache, key=key, agent_id="search-agent", scope="org-123")
    opts = script(say("Paris."))
    await run(agent, QUESTION, opts)
    await run(agent, QUESTION, opts)
    assert calls.count == 1
    expected = build_response_cache_key(
        ResponseCacheKeyInputs(
            agent_id="search-agent",
            scope="org-123",
            model=ModelIdentity.from_spec("local/scripted"),
            prompt=[Message.system(INSTRUCTIONS), Message.user(QUESTION)],
            step_number=0,
        )
    )
    assert await cache.keys() == [expected]
    await run(make_agent(cache, key=not_a_string, agent_id="search-agent", scope="org-123"), QUESTION, opts)
    assert calls.count == 1  # same default key: a hit


def golden_inputs(**changes: Any) -> ResponseCacheKeyInputs:
    base: dict[str, Any] = {
        "agent_id": "search-agent",
        "scope": "org-123",
        "model": ModelIdentity.from_spec("openai/gpt-5"),
        "prompt": [Message.system("You answer questions concisely."), Message.user("What is the capital of France?")],
        "step_number": 0,
    }
    return ResponseCacheKeyInputs(**{**base, **changes})


def test_golden_key_vector() -> None:
    # Hard-coded on purpose: a change to the key derivation must show up here.
    assert build_response_cache_key(golden_inputs()) == (
        "agentd:agent-response:search-agent:83e58256:7fc940ff983546b0a6107fb728cd5c21"
    )
    # The same, spelled out: sha256 of the canonical payload, and of the scope.
    payload = (
        '{"agent":"search-agent","model":"openai:gpt-5:v1","prompt":['
        '{"content":[{"text":"You answer questions concisely.","type":"text"}],"role":"system"},'
        '{"content":[{"text":"What is the capital of France?","type":"text"}],"role":"user"}'
        '],"scope":"org-123","step":0}'
    )
    assert sha(payload)[:32] == "7fc940ff983546b0a6107fb728cd5c21"
    assert sha("org-123")[:8] == "83e58256"
    assert canonical_prompt(golden_inputs().prompt) == [
        {"role": "system", "content": [{"type": "text", "text": "You answer questions concisely."}]},
        {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]},
    ]


def test_every_key_input_changes_the_key() -> None:
    golden = build_response_cache_key(golden_inputs())
    variants = [
        golden_inputs(agent_id="other-agent"),
        golden_inputs(scope="org-456"),
        golden_inputs(scope=None),
        golden_inputs(model=ModelIdentity.from_spec("openai/gpt-5-mini")),
        golden_inputs(model=ModelIdentity("openai", "gpt-5", "v2")),
        golden_inputs(step_number=1),
        golden_inputs(prompt=[Message.user("What is the capital of France?")]),
    ]
    keys = {build_response_cache_key(v) for v in variants}
    assert golden not in keys and len(keys) == len(variants)
    unscoped = build_response_cache_key(golden_inputs(scope=None))
    assert matches_unscoped(unscoped, "search-agent") and not matches_unscoped(golden, "search-agent")
    assert build_response_cache_key(golden_inputs(scope="")) == unscoped  # an empty scope is no scope


def test_the_key_ignores_ids_timestamps_and_agentd_provider_options() -> None:
    fresh = golden_inputs(
        prompt=[
            Message(role="system", parts=[TextPart("You answer questions concisely.")], id="m1"),
            Message(
                role="user",
                parts=[TextPart("What is the capital of France?", provider_options={"agentd": {"createdAt": 1}})],
                id="m2",
                metadata={"source": "ui"},
                provider_options={"agentd": {"x": 1}},
            ),
        ]
    )
    assert build_response_cache_key(fresh) == build_response_cache_key(golden_inputs())
    with_openai = golden_inputs(
        prompt=[
            Message.system("You answer questions concisely."),
            Message(
                role="user",
                parts=[
                    TextPart(
                        "What is the capital of France?",
                        provider_options={"agentd": {"x": 1}, "openai": {"cache": True}},
                    )
                ],
            ),
        ]
    )
    assert build_response_cache_key(with_openai) != build_response_cache_key(golden_inputs())
    assert canonical_prompt(with_openai.prompt)[1]["content"][0]["providerOptions"] == {"openai": {"cache": True}}


def test_integral_floats_hash_like_ints() -> None:
    def with_args(args: Any) -> str:
        prompt = [
            Message.user("q"),
            Message(
                role="assistant",
                parts=[ToolCallPart("c1", "calc", args), ToolResultPart("c1", "calc", {"value": args["n"]})],
            ),
        ]
        return build_response_cache_key(golden_inputs(prompt=prompt))

    assert with_args({"n": 1.0}) == with_args({"n": 1})
    assert with_args({"n": 1.5}) != with_args({"n": 1})
    assert canonical_prompt([Message(role="assistant", parts=[ToolCallPart("c1", "calc", {"n": 2.0})])]) == [
        {
            "role": "assistant",
            "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "calc", "input": {"n": 2}}],
        }
    ]


def test_binary_data_is_digested() -> None:
    data = b"\x89PNG-image"
    [message] = canonical_prompt([Message(role="user", parts=[FilePart("image/png", data=data, filename="a.png")])])
    assert message["content"] == [
        {
            "type": "file",
            "mediaType": "image/png",
            "data": f"binary:{len(data)}:{hashlib.sha256(data).hexdigest()}",
            "filename": "a.png",
        }
    ]
    [by_url] = canonical_prompt([Message(role="user", parts=[FilePart("image/png", url="https://x.test/a.png")])])
    assert by_url["content"][0]["data"] == "url:https://x.test/a.png"


async def test_different_image_bytes_give_different_keys(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)

    def photo(data: bytes) -> Message:
        return Message(role="user", parts=[TextPart("Describe this."), FilePart("image/png", data=data)])

    await run(agent, photo(b"\x89PNG-one"), script(say("one")))
    second = await run(agent, photo(b"\x89PNG-two"), script(say("two")))
    assert calls.count == 2 and second.result.text == "two"
    assert len(await cache.keys()) == 2
    again = await run(agent, photo(b"\x89PNG-one"), script(say("x")))  # a new message: new id and timestamp
    assert calls.count == 2 and again.result.text == "one"


async def test_the_loop_key_is_the_key_of_the_provider_prompt(cache: InMemoryServerCache) -> None:
    agent = make_agent(cache, agent_id="search-agent", scope="org-123")
    await run(agent, QUESTION, script(say("Paris.")))
    expected = build_response_cache_key(golden_inputs(model=ModelIdentity.from_spec("local/scripted")))
    assert await cache.keys() == [expected]
    assert expected.startswith(key_prefix("search-agent", "org-123"))


def test_key_helpers() -> None:
    assert scope_tag(None) == scope_tag("") == ""
    assert scope_tag("u1") == ":" + sha("u1")[:8]
    assert key_prefix("a") == key_prefix("a", None) == "agentd:agent-response:a:"
    assert key_prefix("a", UNSET) == "agentd:agent-response:a:"
    assert key_prefix("a", "u1") == f"agentd:agent-response:a:{sha('u1')[:8]}:"
    unscoped = "agentd:agent-response:a:" + "0" * 32
    scoped = f"agentd:agent-response:a:{sha('u1')[:8]}:" + "0" * 32
    assert matches_unscoped(unscoped, "a")
    assert not matches_unscoped(scoped, "a")
    assert not matches_unscoped(unscoped, "b")
    assert not matches_unscoped(unscoped + "0", "a")
    assert not matches_unscoped("fixed", "a")


# ---------------------------------------------------------------- nothing written for failures


class TripOnResult(Processor):
    id = "trip-on-result"

    def process_output_result(self, args: ProcessOutputResultArgs) -> None:
        args.abort("not allowed")


async def test_a_run_tripped_by_a_later_output_processor_writes_nothing(
    cache: InMemoryServerCache, calls: ModelCalls
) -> None:
    agent = make_agent(cache, output_processors=[TripOnResult()])
    first = await run(agent, QUESTION, script(say("Paris.")))
    assert first.result.tripwire is not None and first.result.finish_reason == "other"
    assert await cache.size() == 0
    await run(agent, QUESTION, script(say("Paris.")))
    assert calls.count == 2


async def test_a_retried_step_writes_only_the_accepted_response(cache: InMemoryServerCache) -> None:
    class RejectOnce(Processor):
        id = "reject-once"

        def process_output_step(self, args: ProcessOutputStepArgs) -> None:
            if not args.state.get("rejected"):
                args.state["rejected"] = True
                args.abort("try again", retry=True)

    agent = make_agent(cache, output_processors=[RejectOnce()])
    agent.max_processor_retries = 1
    result = (await run(agent, QUESTION, script(say("rejected"), say("accepted")))).result
    assert result.tripwire is None and result.text == "accepted"
    entries = [await cache.get(k) for k in await cache.keys()]
    assert len(entries) == 1
    assert "".join(getattr(c, "text", "") for c in entries[0].chunks) == "accepted"


async def test_an_errored_run_writes_nothing(cache: InMemoryServerCache) -> None:
    @tool("lookup", "Looks a capital up")
    def lookup(args: Any) -> Any:
        return "Paris"

    agent = make_agent(cache, tools=[lookup])
    failing = script(
        {"toolCalls": [{"id": "c1", "name": "lookup", "args": {}}]},
        {"error": {"message": "upstream broke", "status": 400}},
    )
    result = (await run(agent, QUESTION, failing)).result
    assert result.error is not None
    assert await cache.size() == 0  # not even the successful first step
    result = (await run(agent, QUESTION, script({"error": {"message": "bad request", "status": 400}}))).result
    assert result.error is not None and await cache.size() == 0


async def test_a_content_filter_finish_writes_nothing(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache)
    result = (await run(agent, QUESTION, script(say("redacted", finishReason="content-filter")))).result
    assert result.finish_reason == "content-filter"
    assert await cache.size() == 0
    await run(agent, QUESTION, script(say("redacted", finishReason="content-filter")))
    assert calls.count == 2


async def test_an_api_error_retry_caches_only_the_successful_attempt(cache: InMemoryServerCache) -> None:
    class RetryOnce(Processor):
        id = "retry-once"

        def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult:
            return APIErrorResult(retry=args.retry_count == 0)

    agent = make_agent(cache, error_processors=[RetryOnce()])
    result = (await run(agent, QUESTION, script({"error": {"message": "flaky", "status": 503}}, say("ok")))).result
    assert result.error is None and result.text == "ok"
    [key] = await cache.keys()
    assert "".join(getattr(c, "text", "") for c in (await cache.get(key)).chunks) == "ok"


# ---------------------------------------------------------------- ttl


async def test_entries_expire_after_the_ttl(cache: InMemoryServerCache, clock: Clock, calls: ModelCalls) -> None:
    agent = make_agent(cache, ttl=60)
    await run(agent, QUESTION, script(say("a")))
    clock.now += 59
    await run(agent, QUESTION, script(say("b")))
    assert calls.count == 1
    clock.now += 2
    assert (await run(agent, QUESTION, script(say("c")))).result.text == "c"
    assert calls.count == 2


async def test_the_default_ttl_is_five_minutes(cache: InMemoryServerCache, clock: Clock, calls: ModelCalls) -> None:
    assert DEFAULT_RESPONSE_CACHE_TTL_SECONDS == 300
    agent = make_agent(cache)
    await run(agent, QUESTION, script(say("a")))
    clock.now += 299
    await run(agent, QUESTION, script(say("b")))
    assert calls.count == 1
    clock.now += 1
    await run(agent, QUESTION, script(say("b")))
    assert calls.count == 2


async def test_per_call_ttl_and_agent_id_are_ignored(
    cache: InMemoryServerCache, clock: Clock, calls: ModelCalls
) -> None:
    agent = make_agent(cache, ttl=100, agent_id="search-agent")
    ctx = {RESPONSE_CACHE_CONTEXT_KEY: {"ttl": 1, "agentId": "other", "agent_id": "other"}}
    await run(agent, QUESTION, script(say("a"), request_context=ctx))
    [key] = await cache.keys()
    assert key.startswith(key_prefix("search-agent"))
    clock.now += 50
    await run(agent, QUESTION, script(say("b"), request_context=ctx))
    assert calls.count == 1


# ---------------------------------------------------------------- backend failures


class DownCache(InMemoryServerCache):
    """A backend that fails like a real one: counts the failure, raises CacheError."""

    def __init__(self, *, fail_get: bool = True, fail_set: bool = True, exc: type[Exception] = CacheError) -> None:
        super().__init__()
        self.fail_get, self.fail_set, self.exc = fail_get, fail_set, exc

    def _fail(self) -> None:
        if self.exc is CacheError:
            self.record_error()  # backends count their own failures
        raise self.exc("backend down")

    async def get(self, key: str) -> Any | None:
        if self.fail_get:
            self._fail()
        return await super().get(key)

    async def set(self, key: str, value: Any, ttl: float | None = None, *, pinned: bool = False) -> None:
        if self.fail_set:
            self._fail()
        await super().set(key, value, ttl, pinned=pinned)


async def test_a_failing_read_means_a_live_call_and_no_write(calls: ModelCalls) -> None:
    cache = DownCache(fail_get=True, fail_set=False)
    agent = make_agent(cache)
    for _ in range(2):
        result = (await run(agent, QUESTION, script(say("live")))).result
        assert result.error is None and result.text == "live"
    assert calls.count == 2
    assert cache.stats.errors == 2  # counted once each, by the backend
    assert cache.stats.writes == 0  # a distrusted backend gets no write


async def test_a_failing_write_never_fails_the_run(calls: ModelCalls) -> None:
    cache = DownCache(fail_get=False, fail_set=True)
    agent = make_agent(cache)
    for _ in range(2):
        result = (await run(agent, QUESTION, script(say("live")))).result
        assert result.error is None and result.text == "live"
    assert calls.count == 2 and cache.stats.errors == 2


async def test_failures_the_backend_did_not_count_are_recorded(calls: ModelCalls) -> None:
    reads = DownCache(fail_get=True, fail_set=False, exc=RuntimeError)
    assert (await run(make_agent(reads), QUESTION, script(say("live")))).result.error is None
    assert reads.stats.errors == 1
    writes = DownCache(fail_get=False, fail_set=True, exc=RuntimeError)
    assert (await run(make_agent(writes), QUESTION, script(say("live")))).result.error is None
    assert writes.stats.errors == 1


@pytest.mark.parametrize("junk", [{"chunks": []}, "text", CachedLLMResponse(chunks=[])])
async def test_an_unusable_entry_is_a_miss_that_gets_replaced(
    cache: InMemoryServerCache, calls: ModelCalls, junk: Any
) -> None:
    agent = make_agent(cache, key="k")
    await cache.set("k", junk)
    result = (await run(agent, QUESTION, script(say("fresh")))).result
    assert result.text == "fresh" and calls.count == 1
    assert cache.stats.errors == 1
    stored = await cache.get("k")
    assert isinstance(stored, CachedLLMResponse) and stored.chunks
    assert (await run(agent, QUESTION, script(say("x")))).result.text == "fresh"
    assert calls.count == 1


async def test_replays_do_not_change_the_cached_entry(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    from agentd.runtime.chunks import TextDelta
    from agentd.runtime.processors.base import ProcessOutputStreamArgs

    class Shout(Processor):
        """Changes payloads in place, as a careless output processor might."""

        id = "shout"

        def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
            if isinstance(args.part.payload, TextDelta):
                args.part.payload.text = args.part.payload.text.upper()
            return args.part

    agent = Agent(
        id="a", model="local/scripted", input_processors=[ResponseCache(cache, key="k")], output_processors=[Shout()]
    )
    first = await agent.generate("q", script(say("Paris.")))
    second = await agent.generate("q", script(say("Paris.")))
    assert (first.text, second.text, calls.count) == ("PARIS.", "PARIS.", 1)
    stored = await cache.get("k")
    assert [e.text for e in stored.chunks if isinstance(e, TextDelta)] == ["Paris."]


# ---------------------------------------------------------------- hooks outside a run


async def test_hooks_called_directly_write_at_once_and_clear_stale_state(cache: InMemoryServerCache) -> None:
    processor = ResponseCache(cache)
    state: dict[str, Any] = {}
    prompt = [Message.user("q")]
    request = ProcessLLMRequestArgs(prompt=prompt, model="local/scripted", step_number=0, steps=[], state=state)
    assert await processor.process_llm_request(request) is None
    assert state  # a miss stashes the key for the response hook
    chunks: list[Any] = [ModelFinish("stop", Usage())]
    response = ProcessLLMResponseArgs(chunks=chunks, model="local/scripted", step_number=0, steps=[], state=state)
    await processor.process_llm_response(response)
    assert not state and await cache.size() == 1  # no on_success: written at once

    # A from-cache response never writes; stale state never directs a write.
    state["pendingKey"] = "stale"
    failing = ResponseCache(DownCache(fail_get=True, fail_set=False))
    await failing.process_llm_request(
        ProcessLLMRequestArgs(prompt=prompt, model="local/scripted", step_number=0, steps=[], state=state)
    )
    assert "pendingKey" not in state


# ---------------------------------------------------------------- context helpers and the factory


def test_context_helpers() -> None:
    assert RESPONSE_CACHE_CONTEXT_KEY == RESPONSE_CACHE_KEY == "agentd.responseCache"
    assert ResponseCache.context() == {RESPONSE_CACHE_CONTEXT_KEY: {}}
    assert ResponseCache.context(bust=True) == {RESPONSE_CACHE_CONTEXT_KEY: {"bust": True}}
    assert ResponseCache.context(scope=None) == {RESPONSE_CACHE_CONTEXT_KEY: {"scope": None}}
    assert ResponseCache.context(key="custom", bust=True) == {
        RESPONSE_CACHE_CONTEXT_KEY: {"key": "custom", "bust": True}
    }

    ctx: dict[str, Any] = {"caller-meta": {"userId": "u-123"}}
    assert ResponseCache.apply_context(ctx, bust=True) is ctx
    ResponseCache.apply_context(ctx, key="k", scope="org")
    assert ctx == {
        "caller-meta": {"userId": "u-123"},
        RESPONSE_CACHE_CONTEXT_KEY: {"bust": True, "key": "k", "scope": "org"},
    }
    ResponseCache.apply_context(ctx, bust=False)
    assert ctx[RESPONSE_CACHE_CONTEXT_KEY]["bust"] is False

    with pytest.raises(ValueError, match="bust"):
        ResponseCache.context(bust="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scope"):
        ResponseCache.context(scope=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key"):
        ResponseCache.context(key="")


async def test_malformed_per_call_fields_are_ignored(cache: InMemoryServerCache, calls: ModelCalls) -> None:
    agent = make_agent(cache, key="k")
    ctx = {RESPONSE_CACHE_CONTEXT_KEY: {"bust": "yes", "key": 5}}
    await run(agent, QUESTION, script(say("a"), request_context=ctx))
    await run(agent, QUESTION, script(say("b"), request_context={RESPONSE_CACHE_CONTEXT_KEY: "not an object"}))
    assert calls.count == 1 and await cache.keys() == ["k"]


def test_constructor_validation(cache: InMemoryServerCache) -> None:
    with pytest.raises(TypeError):
        ResponseCache("not a cache")  # type: ignore[arg-type]
    for bad in ({"ttl": 0}, {"ttl": -1}, {"ttl": True}, {"agent_id": ""}, {"bust": "no"}, {"scope": 5}, {"key": 5}):
        with pytest.raises(ValueError):
            ResponseCache(cache, **bad)
    processor = ResponseCache(cache)
    assert processor.id == "response-cache"
    assert (processor.ttl, processor.scope, processor.key, processor.bust, processor.agent_id) == (
        300,
        UNSET,
        None,
        False,
        DEFAULT_AGENT_ID,
    )


def test_response_cache_factory(cache: InMemoryServerCache) -> None:
    redis = InMemoryServerCache()
    build = response_cache_factory({"memory": cache, "redis": redis})
    default = build({})
    assert default.cache is cache and default.scope is UNSET and default.ttl == 300
    custom = build({"backend": "redis", "ttl": 60, "scope": None, "key": "k", "bust": True, "agentId": "a"})
    assert (custom.cache, custom.ttl, custom.scope, custom.key, custom.bust, custom.agent_id) == (
        redis,
        60,
        None,
        "k",
        True,
        "a",
    )
    assert build({"scope": "org"}).scope == "org"
    # A server whose [cache] backend is redis (replicas) defaults to it.
    assert response_cache_factory({"memory": cache, "redis": redis}, "redis")({}).cache is redis

    memory_only = response_cache_factory({"memory": cache})
    with pytest.raises(ValueError, match="not configured"):
        memory_only({"backend": "redis"})
    with pytest.raises(ValueError, match="unknown backend"):
        build({"backend": "disk"})
    with pytest.raises(ValueError, match="unknown option 'maxSize'"):
        build({"maxSize": 5})
    with pytest.raises(ValueError, match="unknown option 'cache'"):
        build({"cache": "x"})
    with pytest.raises(ValueError, match="ttl"):
        build({"ttl": -1})
    with pytest.raises(ValueError, match="key"):
        build({"key": 5})

    registry = ProcessorRegistry().extended({"response-cache": build})
    processor = registry.build(ProcessorSpec("response-cache", id="cache-2", options={"agentId": "x"}))
    assert isinstance(processor, ResponseCache) and processor.id == "cache-2" and processor.agent_id == "x"
    assert ResponseCache.id == "response-cache"  # the instance id did not leak into the class
