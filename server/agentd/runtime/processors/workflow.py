"""Processor workflows: processors in sequence, parallel branches, and a map
step choosing which branch's output continues; and `run_entry`, the one
interpreter that runs a workflow (or a plain processor) for any hook.

    ProcessorWorkflow("moderation-pipeline", [
        ParallelStep([PIIDetector(strategy="redact"), PromptInjectionDetector()]),
        MapStep("processor:pii-detector"),
    ])

Branch outputs are keyed `processor:<id>`. A workflow can sit in the input or
output lane (not the error lane, and it never takes part in the LLM request,
response or API-error hooks). What a hook runs over (a MessageList, the step
input, a stream chunk) and how a hook's result is applied is the runner's
`Phase` for that hook (runner.py)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

from agentd.runtime.concurrency import run_all
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import Hook, Processor, TripWire, check_hooks, implements

log = logging.getLogger("agentd.processors")

V = TypeVar("V")


@dataclass(frozen=True)
class ParallelStep:
    """Processors run on the same input at once."""

    branches: Sequence[Processor]


@dataclass(frozen=True)
class MapStep:
    """Keeps one branch's output of the parallel step before it."""

    #: The branch key whose output continues, e.g. "processor:pii-detector".
    select: str


WorkflowStep = Processor | ParallelStep | MapStep


def branch_key(processor: Processor) -> str:
    return f"processor:{processor.id}"


class ProcessorWorkflow:
    def __init__(self, id: str, steps: Sequence[WorkflowStep], *, name: str | None = None) -> None:
        if not id:
            raise ValueError("a processor workflow needs an id")
        if not steps:
            raise ValueError(f"processor workflow {id!r} has no steps")
        for i, step in enumerate(steps):
            if isinstance(step, ParallelStep):
                if not step.branches:
                    raise ValueError(f"workflow {id!r} step {i}: a parallel step needs branches")
                keys = [branch_key(b) for b in step.branches]
                if len(set(keys)) != len(keys):
                    raise ValueError(f"workflow {id!r} step {i}: branch ids must be unique")
                following = steps[i + 1] if i + 1 < len(steps) else None
                if not isinstance(following, MapStep):
                    raise ValueError(
                        f"workflow {id!r} step {i}: a parallel step must be followed by a map step "
                        f"selecting one of {keys}"
                    )
                if following.select not in keys:
                    raise ValueError(f"workflow {id!r} step {i + 1}: {following.select!r} is not one of {keys}")
            elif isinstance(step, MapStep):
                if i == 0 or not isinstance(steps[i - 1], ParallelStep):
                    raise ValueError(f"workflow {id!r} step {i}: a map step must follow a parallel step")
        self.id = id
        self.name = name or id
        self.steps = list(steps)
        for processor in self.processors():
            check_hooks(processor)

    def processors(self) -> list[Processor]:
        out: list[Processor] = []
        for step in self.steps:
            if isinstance(step, ParallelStep):
                out.extend(step.branches)
            elif not isinstance(step, MapStep):
                out.append(step)
        return out

    def __repr__(self) -> str:
        return f"<ProcessorWorkflow id={self.id!r} steps={len(self.steps)}>"


class Phase(Protocol[V]):
    """One hook as the interpreter sees it: what it runs over (`V`) and how."""

    @property
    def hook(self) -> Hook: ...

    async def call(self, processor: Processor, value: V) -> V:
        """Runs the hook of `processor` on `value` and applies its result."""
        ...

    def snapshot(self, value: V) -> list[Message]:
        """What a parallel step's join compares against, taken before any branch runs."""
        ...

    def fork(self, value: V) -> V:
        """A branch's own copy of `value`."""
        ...

    def join(self, value: V, before: list[Message], branches: Sequence[V], chosen: int) -> V:
        """`value` after a parallel step: the `chosen` branch's output continues."""
        ...

    def stopped(self, value: V) -> bool:
        """True when nothing is left to process (a dropped chunk)."""
        ...


async def run_entry(entry: Processor | ProcessorWorkflow, phase: Phase[V], value: V) -> V:
    """Runs a lane entry's hook: a plain processor is a one-step workflow."""
    steps: Sequence[WorkflowStep] = entry.steps if isinstance(entry, ProcessorWorkflow) else (entry,)
    for index, step in enumerate(steps):
        if phase.stopped(value):
            break
        if isinstance(step, MapStep):
            continue  # applied by the parallel step before it
        if isinstance(step, ParallelStep):
            select = cast(MapStep, steps[index + 1]).select
            value = await _parallel(entry.id, step, select, phase, value)
        elif implements(step, phase.hook):
            value = await phase.call(step, value)
    return value


async def _parallel(workflow_id: str, step: ParallelStep, select: str, phase: Phase[V], value: V) -> V:
    """Runs the branches concurrently, each on its own copy (`phase.fork`).

    Every branch runs to its end: a branch that trips or fails does not cancel
    its siblings (as in the reference's parallel step, where all branches finish
    before the step's status is decided; a sibling's guardrail verdict and its
    on_violation report still happen). Then the first branch in declaration
    order that raised decides: its TripWire (or error) propagates as a plain
    processor's would, whichever finished first; the others' errors are logged.
    Without a failure, the `select`ed branch's output continues (`phase.join`).
    """
    before = phase.snapshot(value)

    async def branch(processor: Processor) -> V:
        own = phase.fork(value)
        return await phase.call(processor, own) if implements(processor, phase.hook) else own

    def also_failed(index: int, error: BaseException) -> None:
        if isinstance(error, Exception) and not isinstance(error, TripWire):
            log.error("workflow %r: branch %r also failed", workflow_id, step.branches[index].id, exc_info=error)

    outcomes = await run_all([branch(b) for b in step.branches], also_failed)
    chosen = next(i for i, b in enumerate(step.branches) if branch_key(b) == select)
    return phase.join(value, before, outcomes, chosen)
