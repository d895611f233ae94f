"""Where editor overrides are kept: every version of each agent's overrides,
per tenant, in the storage backend (so every replica reads the same ones).

    head(key)                     the current version (None: never written)
    version(key, n)               one version (None: unknown or pruned)
    versions(key, below, limit)   versions under `below`, newest first
    append(key, step, ...)        one atomic read-modify-write: `step` gets the
                                  current values and returns the next ones (or
                                  raises, and nothing is written)
    watch(on_change)              calls `on_change(key)` when another process
                                  writes `key` (`on_change(None)`: anything may
                                  have changed), for the replicas' caches

A key is the agent id scoped to its tenant (`identity.scoped`). Versions are
numbered 1, 2, ... without gaps; the oldest beyond `MAX_VERSIONS` are pruned.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from agentd.runtime.messages import utcnow

__all__ = [
    "MAX_VERSIONS",
    "InMemoryOverrideStore",
    "OnChange",
    "OverrideStore",
    "OverrideValues",
    "OverrideVersion",
    "Step",
]

#: Versions kept per agent and tenant (older ones are pruned on write).
MAX_VERSIONS = 100


@dataclass(frozen=True)
class OverrideValues:
    """What is overridden; None (or an empty map): the code's value."""

    instructions: str | None = None
    #: The tools the agent offers, by name, in order.
    tools: tuple[str, ...] | None = None
    tool_descriptions: dict[str, str] = field(default_factory=dict)

    @property
    def fields(self) -> list[str]:
        """The overridden fields, in the contract's order."""
        out = []
        if self.instructions is not None:
            out.append("instructions")
        if self.tools is not None:
            out.append("tools")
        if self.tool_descriptions:
            out.append("tool_descriptions")
        return out


@dataclass(frozen=True)
class OverrideVersion:
    """One version of an agent's editor overrides."""

    key: str
    version: int
    values: OverrideValues
    #: The subject of the caller who wrote it.
    updated_by: str
    updated_at: datetime = field(default_factory=utcnow)


#: `append`'s step: the current version (None: none yet) to the next values.
Step = Callable[[OverrideVersion | None], OverrideValues]
#: `watch`'s callback: the key another process wrote, or None for "any".
OnChange = Callable[[str | None], None]


def next_version(key: str, current: OverrideVersion | None, step: Step, updated_by: str) -> OverrideVersion:
    """The version `append` writes (shared by every store)."""
    return OverrideVersion(key, (current.version if current else 0) + 1, step(current), updated_by)


class OverrideStore(ABC):
    #: Several processes may use it at once (and `watch` tells each of the others' writes).
    shared: bool = False

    @abstractmethod
    async def head(self, key: str) -> OverrideVersion | None: ...

    @abstractmethod
    async def version(self, key: str, version: int) -> OverrideVersion | None: ...

    @abstractmethod
    async def versions(self, key: str, below: int | None, limit: int) -> list[OverrideVersion]:
        """At most `limit` versions numbered under `below` (None: all), newest first."""

    @abstractmethod
    async def append(self, key: str, step: Step, updated_by: str) -> OverrideVersion: ...

    async def watch(self, on_change: OnChange) -> None:  # noqa: B027 (one process: nobody else writes)
        """Starts telling `on_change` about other processes' writes."""

    async def open(self) -> None:  # noqa: B027 (optional)
        pass

    async def close(self) -> None:  # noqa: B027 (optional)
        pass


def kept_range(head: int, below: int | None, limit: int) -> range:
    """The version numbers `versions` returns, newest first (versions have no gaps)."""
    top = head if below is None else min(head, below - 1)
    bottom = max(1, head - MAX_VERSIONS + 1, top - limit + 1)
    return range(top, bottom - 1, -1)


class InMemoryOverrideStore(OverrideStore):
    """One process's overrides (lost on exit)."""

    def __init__(self) -> None:
        self._versions: dict[str, dict[int, OverrideVersion]] = {}
        self._lock = asyncio.Lock()

    async def head(self, key: str) -> OverrideVersion | None:
        kept = self._versions.get(key)
        return kept[max(kept)] if kept else None

    async def version(self, key: str, version: int) -> OverrideVersion | None:
        return self._versions.get(key, {}).get(version)

    async def versions(self, key: str, below: int | None, limit: int) -> list[OverrideVersion]:
        kept = self._versions.get(key, {})
        if not kept:
            return []
        return [kept[n] for n in kept_range(max(kept), below, limit) if n in kept]

    async def append(self, key: str, step: Step, updated_by: str) -> OverrideVersion:
        async with self._lock:
            made = next_version(key, await self.head(key), step, updated_by)
            kept = self._versions.setdefault(key, {})
            kept[made.version] = made
            for old in [n for n in kept if n <= made.version - MAX_VERSIONS]:
                del kept[old]
            return made
