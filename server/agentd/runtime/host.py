"""Everything one agentd process hosts, wired together once at start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentd.runtime.processors.registry import ProcessorRegistry, default_registry
from agentd.runtime.registry import AgentRegistry, RunRegistry


@dataclass
class Host:
    agents: AgentRegistry
    runs: RunRegistry = field(default_factory=RunRegistry)
    #: Processors that agentd.toml and per-call overrides name.
    processors: ProcessorRegistry = field(default_factory=default_registry)
    #: `prepare_step` functions that per-call options name.
    step_functions: dict[str, Callable[..., Any]] = field(default_factory=dict)
