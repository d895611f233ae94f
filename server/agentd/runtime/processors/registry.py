"""Processors by registered name, for agentd.toml and per-call overrides.

Options arrive as JSON (camelCase, as in the reference docs: `maxRetries`,
`filterAfterToolSteps`); `from_options` maps them onto a processor's
snake_case constructor and names any option it does not take.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.options import ProcessorRef, ProcessorSpec, ProcessorWorkflowSpec
from agentd.runtime.processors.base import Processor

Factory = Callable[[dict[str, Any]], Any]
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def dataclass_from_options(cls: Any, options: Mapping[str, Any], where: str, *, tuples: tuple[str, ...] = ()) -> Any:
    """`cls(**options)` for a dataclass of nested options (camelCase keys accepted);
    `tuples` names list-valued fields stored as tuples."""
    names = {f.name for f in fields(cls)}
    kwargs = {snake(str(k)): v for k, v in options.items()}
    unknown = sorted(k for k in kwargs if k not in names)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in tuples:
        if key in kwargs:
            kwargs[key] = tuple(kwargs[key])
    return cls(**kwargs)


def from_options(cls: Callable[..., Any]) -> Factory:
    """A factory calling `cls(**options)`, camelCase keys accepted."""
    params = inspect.signature(cls).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())

    def build(options: dict[str, Any]) -> Any:
        kwargs = {snake(k): v for k, v in options.items()}
        unknown = sorted(k for k in kwargs if k not in params and not takes_any)
        if unknown:
            allowed = ", ".join(sorted(p for p in params if p != "self")) or "none"
            raise InvalidArgument.field("options", f"unknown option(s) {', '.join(unknown)} (takes: {allowed})")
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument.field("options", str(exc)) from None

    return build


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
        if spec.id:
            processor.id = spec.id
        return processor  # type: ignore[no-any-return]

    def build_ref(self, ref: ProcessorRef) -> Any:
        """A processor, or a ProcessorWorkflow of processors."""
        if isinstance(ref, ProcessorSpec):
            return self.build(ref)
        return self.build_workflow(ref)

    def build_workflow(self, spec: ProcessorWorkflowSpec) -> Any:
        from agentd.runtime.processors.workflow import MapStep, ParallelStep, ProcessorWorkflow

        steps: list[Any] = []
        for step in spec.steps:
            if isinstance(step, ProcessorSpec):
                steps.append(self.build(step))
            elif hasattr(step, "branches"):
                steps.append(ParallelStep([self.build(b) for b in step.branches]))
            else:
                steps.append(MapStep(step.select))
        return ProcessorWorkflow(spec.id, steps)


def default_registry() -> ProcessorRegistry:
    """The built-in processors, by name."""
    from agentd.runtime.processors.builtins import BUILTIN_FACTORIES

    return ProcessorRegistry(BUILTIN_FACTORIES)
