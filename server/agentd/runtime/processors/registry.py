"""Processors by registered name, for agentd.toml and per-call overrides.

A registry maps a name to a factory (`factory.from_options` builds one from a
processor class); the built-ins are in `catalogue.default_registry()`.
"""

from __future__ import annotations

import json

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.options import ParallelStep as ParallelStepSpec
from agentd.runtime.options import ProcessorRef, ProcessorSpec, ProcessorWorkflowSpec
from agentd.runtime.processors.base import Processor, check_hooks
from agentd.runtime.processors.factory import Factory
from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow


class ProcessorRegistry:
    def __init__(self, factories: dict[str, Factory] | None = None) -> None:
        self._factories: dict[str, Factory] = dict(factories or {})

    def register(self, name: str, factory: Factory) -> None:
        self._factories[name] = factory

    def names(self) -> frozenset[str]:
        return frozenset(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def extended(self, factories: dict[str, Factory]) -> ProcessorRegistry:
        return ProcessorRegistry({**self._factories, **factories})

    def build(self, spec: ProcessorSpec) -> Processor:
        factory = self._factories.get(spec.name)
        if factory is None:
            raise InvalidArgument.field("name", f"no processor named {spec.name!r} is registered", "UNKNOWN_PROCESSOR")
        processor = factory(dict(spec.options))
        check_hooks(processor)
        if spec.id:
            processor.id = spec.id
        # One entry listed in several lanes (input and output) is one processor: one state.
        options = json.dumps(spec.options, sort_keys=True, default=repr)
        processor.state_key = ("entry", spec.name, spec.id or "", options)
        return processor  # type: ignore[no-any-return]

    def build_ref(self, ref: ProcessorRef) -> Processor | ProcessorWorkflow:
        """A processor, or a ProcessorWorkflow of processors."""
        if isinstance(ref, ProcessorSpec):
            return self.build(ref)
        return self.build_workflow(ref)

    def build_workflow(self, spec: ProcessorWorkflowSpec) -> ProcessorWorkflow:
        steps: list[Processor | ParallelStep | MapStep] = []
        for step in spec.steps:
            if isinstance(step, ProcessorSpec):
                steps.append(self.build(step))
            elif isinstance(step, ParallelStepSpec):
                steps.append(ParallelStep([self.build(b) for b in step.branches]))
            else:
                steps.append(MapStep(step.select))
        return ProcessorWorkflow(spec.id, steps)
