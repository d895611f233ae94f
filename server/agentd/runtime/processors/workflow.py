"""Processor workflows: processors in sequence, parallel branches, and a map
step choosing which branch's output continues.

    ProcessorWorkflow("moderation-pipeline", [
        ParallelStep([PIIDetector(strategy="redact"), PromptInjectionDetector()]),
        MapStep("processor:pii-detector"),
    ])

Branch outputs are keyed `processor:<id>`. A workflow can sit in the input or
output lane (not the error lane, and it never takes part in the LLM request,
response or API-error hooks). The runner executes it (runner.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentd.runtime.processors.base import Processor


@dataclass(frozen=True)
class ParallelStep:
    branches: Sequence[Processor]


@dataclass(frozen=True)
class MapStep:
    #: The branch key whose output continues, e.g. "processor:pii-detector".
    select: str


WorkflowStep = Processor | ParallelStep | MapStep


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
                keys = [f"processor:{b.id}" for b in step.branches]
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
