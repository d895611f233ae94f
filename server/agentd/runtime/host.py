"""Everything one agentd process hosts, wired together once at start-up."""

from __future__ import annotations

from dataclasses import dataclass, field

from agentd.runtime.registry import AgentRegistry, RunRegistry


@dataclass
class Host:
    agents: AgentRegistry
    runs: RunRegistry = field(default_factory=RunRegistry)
    #: Names of the processors that per-call overrides may reference.
    processor_names: frozenset[str] = frozenset()
