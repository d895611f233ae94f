"""The runtime alone, without gRPC."""

from __future__ import annotations

import asyncio
import gc
import os
import uuid
import weakref

import pytest

from agentd import config
from agentd.runtime import Agent, ExecutionOptions, InvalidArgument, Message, ModelSettings, tool
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.chunks import Chunk, TextDelta
from agentd.runtime.messages import new_id
from agentd.runtime.models.local import split_words
from agentd.runtime.models.router import resolve_model
from agentd.runtime.processors.base import Processor, ProcessorViolation, ProcessOutputStreamArgs
from support.polling import until
from support.runs import script


async def test_echo_streams_words_that_join_back() -> None:
    text = "  spaced   out\ttext\n"
    assert "".join(split_words(text)) == text
    result = await Agent(id="a").generate(text)
    assert result.text == text


async def test_instructions_reach_the_prompt_as_system_messages() -> None:
    seen = []

    @tool("noop", "does nothing")
    def noop(args: object) -> str:
        return "ok"

    agent = Agent(
        id="a",
        model="local/scripted",
        instructions=["one", Message.system("two", {"anthropic": {"cacheControl": {"type": "ephemeral"}}})],
        tools=[noop],
    )
    model = resolve_model("local/echo")
    original = type(model).stream

    def spy(self, request):  # type: ignore[no-untyped-def]
        seen.append(request)
        return original(self, request)

    type(model).stream = spy  # type: ignore[method-assign]
    try:
        await agent.generate("hi", script({"text": "x"}))
    finally:
        type(model).stream = original  # type: ignore[method-assign]
    prompt = seen[0].prompt
    assert [m.role for m in prompt] == ["system", "system", "user"]
    assert prompt[1].provider_options == {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
    assert [t.name for t in seen[0].tools] == ["noop"]


async def test_scripted_reasoning_tools_usage_and_finish() -> None:
    calls = []

    @tool("lookup", "Looks up")
    async def lookup(args: dict) -> dict:  # type: ignore[type-arg]
        calls.append(args)
        return {"found": args["q"]}

    agent = Agent(id="a", model="local/scripted", tools=[lookup])
    result = await agent.generate(
        "q",
        script(
            {
                "reasoning": "think first",
                "toolCalls": [{"id": "t1", "name": "lookup", "args": {"q": "z"}}],
                "usage": {"inputTokens": 10, "outputTokens": 2},
            },
            {"text": "done", "finishReason": "length", "usage": {"inputTokens": 12, "outputTokens": 1}},
        ),
    )
    assert calls == [{"q": "z"}]
    assert result.text == "done" and result.finish_reason == "length"
    assert result.steps[0].reasoning_text == "think first"
    assert result.tool_results[0].result == {"found": "z"}
    assert (result.usage.output_tokens, result.total_usage.input_tokens) == (1, 22)


async def test_max_steps_stops_a_tool_loop() -> None:
    agent = Agent(id="a", model="local/scripted")
    step = {"toolCalls": [{"name": "missing", "args": {}}]}
    result = await agent.generate("q", ExecutionOptions(max_steps=3, provider_options={"local": {"script": [step]}}))
    assert len(result.steps) == 3
    assert result.tool_results[0].is_error  # unknown tools answer the model with an error


async def test_structured_output_is_parsed() -> None:
    from agentd.runtime.options import StructuredOutput

    agent = Agent(id="a", model="local/scripted")
    result = await agent.generate(
        "q",
        ExecutionOptions(
            structured_output=StructuredOutput({"type": "object"}),
            provider_options={"local": {"script": [{"object": {"answer": 42}}]}},
        ),
    )
    assert result.object == {"answer": 42}


async def test_default_options_apply_under_call_options() -> None:
    agent = Agent(id="a", default_options=ExecutionOptions(max_steps=2, model_settings=ModelSettings(temperature=0)))
    merged = ExecutionOptions(max_steps=4).merged_over(agent.default_options)  # type: ignore[arg-type]
    assert merged.max_steps == 4 and merged.model_settings == ModelSettings(temperature=0)


async def test_dynamic_fields_resolve_from_the_request_context() -> None:
    agent = Agent(id="a", model=lambda ctx: "local/scripted" if ctx.get("script") else "local/echo")
    plain = await agent.generate("hello")
    assert plain.model == "local/echo"
    scripted_run = await agent.generate(
        "hello",
        ExecutionOptions(request_context={"script": True}, provider_options={"local": {"script": [{"text": "s"}]}}),
    )
    assert (scripted_run.model, scripted_run.text) == ("local/scripted", "s")


async def test_bad_script_fails_set_up_with_a_field_violation() -> None:
    handle = Agent(id="a", model="local/scripted").stream(
        "x", ExecutionOptions(provider_options={"local": {"script": "nope"}})
    )
    with pytest.raises(InvalidArgument) as info:
        await handle.ready()
    assert info.value.violations[0].field == "options.provider_options.local.script"
    await handle.result()


async def test_abort_ends_the_run_with_an_abort_chunk() -> None:
    handle = Agent(id="a").stream(" ".join(["w"] * 100), ExecutionOptions(provider_options={"local": {"delayMs": 10}}))
    await handle.ready()
    await until(lambda: any(isinstance(c.payload, TextDelta) for c in handle.buffer.snapshot()), what="the reply")
    assert handle.abort("SERVER_SHUTDOWN")
    result = await handle.result()
    chunks = handle.buffer.snapshot()
    assert chunks[-1].type == "abort" and result.aborted and result.aborted.reason == "SERVER_SHUTDOWN"
    assert [c.seq for c in chunks] == list(range(1, len(chunks) + 1))
    assert not handle.abort()  # already done


async def test_a_run_aborted_before_its_first_step_still_ends_aborted() -> None:
    """An abort in the same loop turn as the start (a shutdown, an AbortRun that
    found the run at once): a task cancelled before it runs never runs its body,
    so its readers were left waiting on a buffer nobody would close."""
    handle = Agent(id="a").stream("never said")
    assert handle.abort("SERVER_SHUTDOWN", "before it began")
    await asyncio.wait_for(handle.ready(), 30)
    result = await asyncio.wait_for(handle.result(), 30)
    assert result.aborted is not None and result.aborted.reason == "SERVER_SHUTDOWN"
    assert handle.buffer.closed and handle.buffer.snapshot()[-1].type == "abort"
    assert not any(isinstance(c.payload, TextDelta) for c in handle.buffer.snapshot())


async def test_a_runs_own_chunks_are_what_the_chunk_class_builds() -> None:
    """The loop sets its chunks' fields one by one (no __init__ call): a field
    added to Chunk, or a default changed, must be set there too."""
    handle = Agent(id="a").stream("one two")
    await handle.result()
    chunks = handle.buffer.snapshot()
    assert [c.type for c in chunks][:2] == ["start", "step-start"] and chunks[-1].type == "finish"
    for c in chunks:
        assert c == Chunk(c.payload, c.run_id, c.seq, c.parent_run_id)


async def test_chunk_buffer_batches_what_is_ready_for_each_reader() -> None:
    buffer = ChunkBuffer()
    for i in range(5):
        buffer.append(Chunk(TextDelta("t", str(i)), "r", i + 1))
    reader = buffer.batches(max_batch=3)
    assert [c.seq for c in await reader.__anext__()] == [1, 2, 3]
    assert [c.seq for c in await reader.__anext__()] == [4, 5]
    late = [c.seq async for b in _closing(buffer) for c in b]
    assert late == [1, 2, 3, 4, 5, 6]


async def test_a_lingering_reader_takes_a_full_batch_or_what_is_there_at_close() -> None:
    buffer = ChunkBuffer()
    reader = buffer.batches(max_batch=3, linger=3600.0)  # only a full batch or the close ends its linger
    buffer.append(Chunk(TextDelta("t", "0"), "r", 1))
    assert [c.seq for c in await reader.__anext__()] == [1]  # the first batch is never held
    next_batch = asyncio.ensure_future(reader.__anext__())
    for seq in (2, 3, 4, 5):
        buffer.append(Chunk(TextDelta("t", str(seq)), "r", seq))
        await asyncio.sleep(0)
    assert [c.seq for c in await next_batch] == [2, 3, 4]
    last = asyncio.ensure_future(reader.__anext__())
    await asyncio.sleep(0)
    assert not last.done()  # one chunk came right after a batch: it waits for more
    buffer.close()
    assert [c.seq for c in await last] == [5]
    assert [b async for b in reader] == []


async def _closing(buffer: ChunkBuffer):  # type: ignore[no-untyped-def]
    async def producer() -> None:
        await asyncio.sleep(0.01)
        buffer.append(Chunk(TextDelta("t", "5"), "r", 6))
        buffer.close()

    task = asyncio.create_task(producer())
    async for batch in buffer.batches():
        yield batch
    await task


def test_config_rejects_unknown_keys_and_bad_models(tmp_path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "a.toml"
    bad.write_text('[[agents]]\nid = "x"\nmodle = "local/echo"\n')
    with pytest.raises(config.ConfigError, match="modle"):
        config.load(bad, env={})
    bad.write_text('[[agents]]\nid = "x"\nmodel = "nowhere/thing"\n')
    with pytest.raises(config.ConfigError, match="unknown provider"):
        config.load(bad, env={})


def test_config_reads_a_signal_delivery_policy(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "agentd.toml"
    path.write_text('[[agents]]\nid = "x"\nsignal_delivery = { user-message = "queue", reactive = "persist" }\n')
    [agent] = config.load(path, env={}).agents
    assert agent.signal_delivery == {"user": "queue", "reactive": "persist"}  # legacy names normalised
    for bad, word in (('{ banana = "queue" }', "banana"), ('{ user = "wake" }', "wake")):
        path.write_text(f'[[agents]]\nid = "x"\nsignal_delivery = {bad}\n')
        with pytest.raises(config.ConfigError, match=word):
            config.load(path, env={})


def test_config_env_overrides(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "a.toml"
    path.write_text('[server]\nport = 1234\n[[agents]]\nid = "x"\n')
    cfg = config.load(None, env={"AGENTD_CONFIG": str(path), "AGENTD_PORT": "999", "AGENTD_HOST": "0.0.0.0"})
    assert (cfg.server.host, cfg.server.port, [a.id for a in cfg.agents]) == ("0.0.0.0", 999, ["x"])


def test_config_builds_processors_and_workflows(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from agentd.runtime.processors.workflow import ProcessorWorkflow

    path = tmp_path / "a.toml"
    path.write_text(
        """
[[agents]]
id = "guarded"
error_processor_defaults = false
input_processors = [
  { name = "unicode-normalizer", options = { trim = true } },
  { workflow = { id = "pipeline", steps = [
      { parallel = [ { name = "token-limiter", options = { limit = 1000 } },
                     { name = "unicode-normalizer", id = "un2" } ] },
      { map = "processor:un2" },
  ] } },
]
output_processors = [ { name = "batch-parts", options = { batchSize = 3 } } ]
error_processors = [ { name = "stream-error-retry-processor", options = { maxRetries = 2 } } ]
"""
    )
    agent = config.load(path, env={}).agents[0]
    assert [p.id for p in agent.input_processors] == ["unicode-normalizer", "pipeline"]  # type: ignore[union-attr]
    assert isinstance(agent.input_processors[1], ProcessorWorkflow)  # type: ignore[index]
    assert agent.output_processors[0].batch_size == 3  # type: ignore[index]
    assert agent.error_processors[0].max_retries == 2  # type: ignore[index]
    assert agent.error_processor_defaults is False
    path.write_text('[[agents]]\nid = "x"\ninput_processors = [ { name = "no-such" } ]\n')
    with pytest.raises(config.ConfigError, match="no-such"):
        config.load(path, env={})


async def test_a_finished_run_is_freed_without_the_cycle_collector() -> None:
    """A run's pieces hold no reference cycle once it ends: a server's runs
    are freed as their callers let go, and leave the collector nothing to do."""
    agent = Agent(id="a", output_processors=[PassThrough()])
    await agent.generate("warm up")
    gc.collect()
    gc.disable()
    try:
        handle = agent.stream("one two three")
        assert (await handle.result()).text == "one two three"
        await asyncio.sleep(0)  # the task's done callbacks
        gone = weakref.ref(handle)
        del handle
        assert gone() is None
    finally:
        gc.enable()


class PassThrough(Processor):
    id = "pass"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        args.report(ProcessorViolation("pass", "seen"))  # the report callback is held per run too
        return args.part


async def test_a_cancelled_wait_for_a_run_leaves_the_run_and_other_waiters_alone() -> None:
    go = asyncio.Event()

    async def instructions(context: object) -> str:
        await go.wait()  # set-up waits here, so the callers below wait for it
        return "be brief"

    agent = Agent(id="a", model="local/scripted", instructions=instructions)
    handle = agent.stream("x", script({"text": "a b c d", "delayMs": 5}))
    ready_waits = [asyncio.ensure_future(handle.ready()) for _ in range(2)]
    result_waits = [asyncio.ensure_future(handle.result()) for _ in range(2)]
    await asyncio.sleep(0)
    ready_waits[0].cancel()
    result_waits[0].cancel()
    go.set()
    await ready_waits[1]
    result = await result_waits[1]
    assert result.text == "a b c d"
    assert ready_waits[0].cancelled() and result_waits[0].cancelled()
    assert (await handle.result()) is result and handle.done


async def test_every_waiter_is_told_how_the_run_ended() -> None:
    agent = Agent(id="a", model="local/scripted")
    # Set-up fails (the caller's mistake): every caller waiting for set-up is told.
    failing = agent.stream("x", ExecutionOptions(provider_options={"local": {"script": "not a list"}}))
    waits = [asyncio.ensure_future(failing.ready()) for _ in range(2)]
    for wait in waits:
        with pytest.raises(InvalidArgument):
            await wait
    # An aborted run: every caller waiting for its result gets the aborted result.
    slow = agent.stream("x", script({"text": "a b c d e f", "delayMs": 20}))
    results = [asyncio.ensure_future(slow.result()) for _ in range(2)]
    await slow.ready()
    assert slow.abort("TEST", "stop")
    ended = [await r for r in results]
    assert ended[0] is ended[1] and ended[0].aborted is not None and ended[0].aborted.reason == "TEST"


def test_ids_are_version_4_uuids_unique_across_pool_refills() -> None:
    ids = [new_id() for _ in range(600)] + [new_id("msg_").removeprefix("msg_") for _ in range(600)]
    parsed = [uuid.UUID(i) for i in ids]
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 for u in parsed)
    assert len({u.int for u in parsed}) == len(ids)
    assert all(i == str(u) for i, u in zip(ids[:600], parsed[:600], strict=True))  # hyphenated without a prefix
    assert all(len(i) == 32 and i == u.hex for i, u in zip(ids[600:], parsed[600:], strict=True))


def test_a_forked_child_draws_ids_its_parent_never_does() -> None:
    """Both kinds of id are drawn in batches: a child forked mid-batch starts a batch of its own."""
    before = [new_id(), new_id("msg_"), Message.user("x").id]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        os.close(read)
        os.write(write, " ".join([new_id(), new_id("msg_"), Message.user("x").id]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    parent = [new_id(), new_id("msg_"), Message.user("x").id]
    assert len(child) == 3 and not set(child) & set(parent + before)
    assert [uuid.UUID(i.removeprefix("msg_")).version for i in child] == [4, 4, 4]
