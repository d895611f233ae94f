"""Models for agentd's own tests, never shipped: a model whose replies are a
Python function, and the `held/...` models built on it.

`FunctionModel(function)` is a LanguageModel whose every call is
`function(request, call)` (`call` counts this instance's calls from 0; the
runtime makes one instance per run). Register a factory to use one by name:

    register_provider("fn", lambda model_id: FunctionModel(my_reply, provider="fn", model_id=model_id))

`held/<local model id>` answers as `local/<id>` does (the same script from
`provider_options.local`), but holds its text before delta number
`afterDeltas` until the file `releaseFile` exists:

    provider_options = {"local": {"script": [{"deltas": ["good ", "morning"]}]},
                        "held": {"afterDeltas": 1, "releaseFile": "/tmp/release"}}

so a test (in this process or another: a terminal, a second replica) decides
when the rest of the reply may come; an abort ends the wait. In-process tests
register it with `register_provider(HELD, held_model)`; `agentd serve --app
tests.held_app` registers it in a server.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentd.runtime import InvalidArgument, ModelEvent, ModelRequest
from agentd.runtime.chunks import TextDelta, TextEnd, TextStart, Usage
from agentd.runtime.models.base import ModelFinish
from agentd.runtime.models.local import LocalModel

#: The provider name the held models are registered under.
HELD = "held"
#: `prompt/<anything>` replies with what it was sent besides the conversation (`prompt_model`).
PROMPT = "prompt"

#: A function model's behaviour: the request and the call's number, to the call's events.
StreamFunction = Callable[[ModelRequest, int], AsyncIterator[ModelEvent]]


class FunctionModel:
    """A LanguageModel whose replies are a Python function."""

    def __init__(self, function: StreamFunction, *, provider: str = "function", model_id: str = "function") -> None:
        self._function = function
        self._provider = provider
        self._model_id = model_id
        self._calls = 0

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def spec(self) -> str:
        return f"{self._provider}/{self._model_id}"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call, self._calls = self._calls, self._calls + 1
        return self._function(request, call)


@dataclass(frozen=True, slots=True)
class Hold:
    """Where a held reply stops, and the file that lets it go on."""

    after_deltas: int
    release_file: str

    @classmethod
    def of(cls, provider_options: Mapping[str, Any]) -> Hold | None:
        raw = provider_options.get(HELD)
        if raw is None:
            return None
        where = f"options.provider_options.{HELD}"
        if not isinstance(raw, Mapping):
            raise InvalidArgument.field(where, "must be an object")
        after, release = raw.get("afterDeltas"), raw.get("releaseFile")
        # A count, which protobuf Structs carry as a float.
        if not isinstance(after, int | float) or isinstance(after, bool) or after < 0 or after != int(after):
            raise InvalidArgument.field(f"{where}.afterDeltas", "must be a count of deltas")
        if not isinstance(release, str) or not release:
            raise InvalidArgument.field(f"{where}.releaseFile", "must name the file that releases the reply")
        return cls(int(after), release)

    async def wait(self) -> None:
        # Another process may create the file, so there is no event to await; a stat is cheap.
        while not os.path.exists(self.release_file):  # noqa: ASYNC110, ASYNC240
            await asyncio.sleep(0.02)


def held_model(model_id: str) -> FunctionModel:
    """A `held/<model_id>` model for one run: `local/<model_id>`'s replies, held."""
    local = LocalModel(model_id)  # one per run, like the model it wraps: it counts the script's steps

    def reply(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
        hold = Hold.of(request.provider_options)
        events = local.stream(request)  # now: a bad script fails the call, as it does for local/
        return events if hold is None else _held(events, hold)

    return FunctionModel(reply, provider=HELD, model_id=model_id)


async def _held(events: AsyncIterator[ModelEvent], hold: Hold) -> AsyncIterator[ModelEvent]:
    deltas = 0
    try:
        async for event in events:
            if isinstance(event, TextDelta):
                if deltas == hold.after_deltas:
                    await hold.wait()
                deltas += 1
            yield event
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()


async def _reveal_prompt(request: ModelRequest, call: int) -> AsyncIterator[ModelEvent]:
    system = " | ".join(m.text for m in request.prompt if m.role == "system")
    tools = ", ".join(f"{t.name}: {t.description}" for t in request.tools)
    yield TextStart("t")
    yield TextDelta("t", f"system=[{system}] tools=[{tools}]")
    yield TextEnd("t")
    yield ModelFinish("stop", Usage())


def prompt_model(model_id: str) -> FunctionModel:
    """A model whose reply is its system prompt and its tools (name: description), so a
    test sees over the wire what a run sent: `system=[...] tools=[a: ..., b: ...]`."""
    return FunctionModel(_reveal_prompt, provider=PROMPT, model_id=model_id)
