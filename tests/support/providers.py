"""For the provider adapters' tests: a processor that records the model errors
a run hands to error processors, and routing `provider/...` to an adapter the
model router does not serve yet."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agentd.runtime import FailedPrecondition
from agentd.runtime.loop import agent_loop, model_call
from agentd.runtime.models import router
from agentd.runtime.processors.base import ProcessAPIErrorArgs, Processor


class RecordErrors(Processor):
    id = "record-errors"

    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    async def process_api_error(self, args: ProcessAPIErrorArgs) -> None:
        self.errors.append(args.error)


def route_provider(monkeypatch: pytest.MonkeyPatch, spec: str, create: Callable[[str], Any]) -> None:
    """Until the router knows `spec`'s provider, resolve its specs with `create(model_id)` here."""
    try:
        router.resolve_model(spec)
        return  # the router already serves it
    except FailedPrecondition as exc:
        if exc.reason != "PROVIDER_UNAVAILABLE":
            raise
    original = router.resolve_model
    wanted, _ = router.parse_model_spec(spec)

    def resolve(model_spec: str) -> Any:
        provider, model_id = router.parse_model_spec(model_spec)
        return create(model_id) if provider == wanted else original(model_spec)

    monkeypatch.setattr(router, "resolve_model", resolve)
    monkeypatch.setattr(agent_loop, "resolve_model", resolve)
    monkeypatch.setattr(model_call, "resolve_model", resolve)
