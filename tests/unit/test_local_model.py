"""The embedded local model's script checks, and models an application registers
(register_provider), here the test-only FunctionModel and held/ models."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd.runtime import (
    Agent,
    ExecutionOptions,
    InvalidArgument,
    ModelEvent,
    ModelFinish,
    ModelRequest,
    Usage,
    register_provider,
)
from agentd.runtime.chunks import TextDelta, TextEnd, TextStart
from agentd.runtime.messages import Message
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.models.local import LocalModel
from agentd.runtime.models.router import check_model_spec
from support.polling import until
from support.runs import script
from support_models import HELD, FunctionModel, held_model


async def refusal(options: ExecutionOptions) -> InvalidArgument:
    handle = Agent(id="a", model="local/scripted").stream("x", options)
    with pytest.raises(InvalidArgument) as info:
        await handle.ready()
    await handle.result()
    return info.value


async def test_the_product_model_refuses_the_hold_keys_as_unknown_script_keys(tmp_path: Path) -> None:
    # With these keys the local model held its reply until a path on the server
    # existed, so any caller could learn whether a path exists: they are test-only now.
    error = await refusal(script({"deltas": ["a ", "b"], "holdAfterDeltas": 1, "releaseFile": "/etc/passwd"}))
    fields = [v.field for v in error.violations]
    assert fields == [
        "options.provider_options.local.script.holdAfterDeltas",
        "options.provider_options.local.script.releaseFile",
    ]
    assert all("unknown script key" in v.description for v in error.violations)

    missing = tmp_path / "never"
    error = await refusal(script({"text": "ok"}, {"text": "later", "releaseFile": str(missing)}))
    assert [v.field for v in error.violations] == ["options.provider_options.local.script.releaseFile"]


async def test_a_misspelt_script_key_is_refused_not_ignored() -> None:
    error = await refusal(script({"txt": "hello"}))
    assert [v.field for v in error.violations] == ["options.provider_options.local.script.txt"]
    result = await Agent(id="a", model="local/scripted").generate("x", script({"text": "hello", "delayMs": 0}))
    assert result.text == "hello"


async def test_a_long_reply_without_a_delay_lets_its_readers_in_while_it_streams() -> None:
    # With no delay the model yields to the loop now and then, not before every
    # delta: a reader still gets the first chunks while the reply goes on, and
    # an abort then lands mid-reply.
    words = [f"w{i}" for i in range(400)]
    handle = Agent(id="a").stream(" ".join(words))
    first = await anext(handle.buffer.batches())
    assert not handle.done and 0 < len(first) < len(words)
    assert handle.abort("TEST", "mid-reply")
    result = await handle.result()
    assert result.aborted is not None and result.aborted.reason == "TEST"


@pytest.mark.parametrize("delay_ms", [0, 1])
async def test_read_one_by_one_the_local_model_streams_what_it_batches_then_its_failure(delay_ms: int) -> None:
    # What a structuring or judge model call reads: the events one by one, the pauses waited for.
    step = {"text": "a b c", "delayMs": delay_ms, "error": {"message": "cut", "afterDeltas": 2}}
    stream = LocalModel("scripted").stream(
        ModelRequest([Message.user("x")], provider_options=script(step).provider_options)
    )
    seen: list[ModelEvent] = []
    with pytest.raises(ModelAPIError, match="cut"):
        async for event in stream:
            seen.append(event)
    assert [type(e) for e in seen] == [TextStart, TextDelta, TextDelta]
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["a ", "b "]


async def test_a_registered_provider_resolves_to_a_fresh_model_per_run() -> None:
    async def reply(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
        yield TextStart("t")
        yield TextDelta("t", f"call {call} of {request.prompt[-1].text}")
        yield TextEnd("t")
        yield ModelFinish("stop", Usage())

    register_provider("fn", lambda model_id: FunctionModel(reply, provider="fn", model_id=model_id))
    check_model_spec("fn/anything")
    for _ in range(2):  # call 0 each time: one instance per run
        result = await Agent(id="a", model="fn/x").generate("hi")
        assert (result.model, result.text) == ("fn/x", "call 0 of hi")

    for name in ("local", "openai", "anthropic", "google", "", "a/b"):
        with pytest.raises(ValueError):
            register_provider(name, held_model)


async def test_the_held_model_holds_its_text_until_the_file_exists(tmp_path: Path) -> None:
    register_provider(HELD, held_model)
    release = tmp_path / "release"
    options = ExecutionOptions(
        provider_options={
            "local": {"script": [{"deltas": ["good ", "morning"]}]},
            HELD: {"afterDeltas": 1, "releaseFile": str(release)},
        }
    )
    handle = Agent(id="a", model="held/scripted").stream("hello", options)
    await handle.ready()

    def deltas() -> list[str]:
        return [c.payload.text for c in handle.buffer.snapshot() if isinstance(c.payload, TextDelta)]

    await until(deltas, holds=lambda got: got == ["good "], what="the first delta")
    await asyncio.sleep(0.1)
    assert not handle.done and deltas() == ["good "]  # holding
    release.touch()
    result = await asyncio.wait_for(handle.result(), 5)
    assert (result.model, result.text) == ("held/scripted", "good morning")
