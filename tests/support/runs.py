"""Running an agent through the runtime API: the local model's script as
options, a streamed run's result and chunks, and a spy on what the local
models are sent."""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from agentd.runtime import Agent, ExecutionOptions
from agentd.runtime.chunks import Chunk
from agentd.runtime.models.base import ModelRequest
from agentd.runtime.models.local import LocalModel
from agentd.runtime.run import RunResult


def script(*steps: dict[str, Any], **extra: Any) -> ExecutionOptions:
    """Options (with `extra`) that make `local/scripted` answer one step a model call."""
    return ExecutionOptions(provider_options={"local": {"script": list(steps)}}, **extra)


class Ran(NamedTuple):
    """A streamed run: its result and every chunk it streamed."""

    result: RunResult
    chunks: list[Chunk]

    @property
    def types(self) -> list[str]:
        return [c.type for c in self.chunks]


async def run(agent: Agent, run_input: Any = "hi", options: ExecutionOptions | None = None) -> Ran:
    handle = agent.stream(run_input, options)
    chunks = [c async for c in handle]
    return Ran(await handle.result(), chunks)


class LocalModelSpy:
    """Every request the local models are sent (main and judge calls), in order."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.requests: list[ModelRequest] = []
        original = LocalModel.stream

        def stream(model: LocalModel, request: ModelRequest) -> Any:
            self.requests.append(request)
            return original(model, request)

        monkeypatch.setattr(LocalModel, "stream", stream)
