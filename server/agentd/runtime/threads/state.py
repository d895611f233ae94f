"""What the thread runtime keeps per live thread."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentd.runtime.options import ExecutionOptions
from agentd.runtime.signals import Signal

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent
    from agentd.runtime.run import RunHandle

__all__ = ["LiveThread", "Queued"]


@dataclass
class Queued:
    """A run waiting for its thread: the signal that opens it, with the run's id fixed in advance."""

    agent: Agent
    signal: Signal
    run_id: str
    options: ExecutionOptions


@dataclass
class LiveThread:
    """A thread this replica runs: its active run and its latest agent and options."""

    resource_id: str
    thread_id: str
    active: RunHandle | None = None
    #: The agent and options of the thread's latest run (a queued message runs with them).
    agent: Agent | None = None
    options: ExecutionOptions | None = None
    queue: deque[Queued] = field(default_factory=deque)
    #: Serialises the decisions about the thread that await (routing, a run's end, a takeover).
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Operations (and the run's logging task) using this state now: it is kept while any is.
    users: int = 0
    #: The thread is being deleted: its run's end starts no queued run.
    deleting: bool = False

    @property
    def running(self) -> RunHandle | None:
        """The active run, unless it is over."""
        active = self.active
        return active if active is not None and not active.done else None
