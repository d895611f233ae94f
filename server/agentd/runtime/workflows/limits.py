"""How deep workflows may nest and how wide a step may be (`[workflow_limits]`):
its own module, since every host holds limits and most hold no workflow."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_DEPTH", "DEFAULT_MAX_PARALLEL", "WorkflowLimits"]

DEFAULT_MAX_DEPTH = 8
DEFAULT_MAX_PARALLEL = 16


@dataclass(frozen=True, slots=True)
class WorkflowLimits:
    """`[workflow_limits]`: how deep workflows nest and how wide a step may be."""

    #: How deep workflows may nest (a workflow in a workflow, or run by an agent step's agent).
    max_depth: int = DEFAULT_MAX_DEPTH
    #: The most steps one parallel or branch step may hold.
    max_parallel: int = DEFAULT_MAX_PARALLEL

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_parallel"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"workflow_limits.{name}: {value!r} is not a whole number of at least 1")
