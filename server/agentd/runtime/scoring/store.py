"""Where scores are kept: the interface, and the store in this process's memory
(bounded: the oldest scores go first once it holds `max_scores`)."""

from __future__ import annotations

import bisect
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

from agentd.runtime.lazy import lazy

if TYPE_CHECKING:
    from agentd.runtime.scoring import record as _record
    from agentd.runtime.scoring.record import Score, ScorePage, ScoreQuery
else:
    _record = lazy("agentd.runtime.scoring.record")  # with the first score: a store made at start-up loads none

__all__ = ["InMemoryScoreStore", "ScoreStore"]

DEFAULT_MAX_SCORES = 100_000


class ScoreStore(ABC):
    #: Whether replicas may share it (their scores all in one place).
    shared: ClassVar[bool] = False
    backend: ClassVar[str] = ""

    async def open(self) -> None:  # noqa: B027 (optional)
        """Connects or migrates now (else on first use)."""

    async def close(self) -> None:  # noqa: B027 (optional)
        """Releases what the store holds."""

    @abstractmethod
    async def add(self, score: Score) -> None:
        """Stores one score (StorageError when the backend fails)."""

    @abstractmethod
    async def list(self, query: ScoreQuery) -> ScorePage:
        """The scores `query` asks for, newest first."""


class InMemoryScoreStore(ScoreStore):
    backend = "memory"

    def __init__(self, max_scores: int = DEFAULT_MAX_SCORES) -> None:
        self.max_scores = max_scores
        #: Oldest first, by (created_at, id).
        self._scores: list[Score] = []

    async def add(self, score: Score) -> None:
        self._scores.insert(bisect.bisect(self._scores, _record.sort_key(score), key=_record.sort_key), score)
        del self._scores[: max(0, len(self._scores) - self.max_scores)]

    async def list(self, query: ScoreQuery) -> ScorePage:
        found: list[Score] = []
        for score in reversed(self._scores):
            if _record.matches(query, score):
                found.append(score)
                if len(found) > query.limit:
                    break
        return _record.page_of(query, found)
