"""The per-call `prepare_step` callback, run as a processor (id "prepare-step")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentd.runtime.processors.base import ProcessInputStepArgs, Processor


class PrepareStepProcessor(Processor):
    """`process_input_step` that calls `prepare_step(args)`: same arguments, same
    results. Not registered by name: over RPC, `prepare_step` names a step
    function the server registered."""

    def __init__(self, prepare_step: Callable[[ProcessInputStepArgs], Any]) -> None:
        self.id = "prepare-step"
        self._prepare_step = prepare_step

    def process_input_step(self, args: ProcessInputStepArgs) -> Any:
        return self._prepare_step(args)
