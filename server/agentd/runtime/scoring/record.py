"""A stored score, and the query that lists them (newest first, keyset pages).

Every store orders scores by (created_at, id) descending; a page's cursor is
the (created_at, id) of its last score, an exclusive upper bound for the next.
Thread and resource ids are stored as the run saw them (scoped to the tenant);
`tenant` is kept beside them, so a run without a thread is still the tenant's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

__all__ = ["Score", "ScorePage", "ScoreQuery", "matches", "page_of", "sort_key"]


@dataclass(frozen=True, slots=True)
class Score:
    """One scorer's score of one run, as stored."""

    id: str
    tenant: str
    agent_id: str
    scorer: str
    run_id: str
    value: float
    created_at: datetime
    thread_id: str = ""
    resource_id: str = ""
    reason: str = ""
    label: str = ""
    #: "judge", "function" or "guardrails".
    source: str = "function"


@dataclass(frozen=True, slots=True)
class ScoreQuery:
    """Which scores to list: a tenant's, filtered by agent, thread, run, scorer and time."""

    tenant: str
    agent_id: str = ""
    thread_id: str = ""
    run_id: str = ""
    scorer: str = ""
    #: Created at or after `start`, before `end` (None: unbounded).
    start: datetime | None = None
    end: datetime | None = None
    limit: int = 50
    #: (created_at, id) of the previous page's last score.
    after: tuple[datetime, str] | None = None


@dataclass(frozen=True, slots=True)
class ScorePage:
    """A page of scores, newest first."""

    scores: list[Score]
    #: The cursor of the next page; None on the last page.
    next_cursor: tuple[datetime, str] | None


def sort_key(score: Score) -> tuple[datetime, str]:
    return (score.created_at, score.id)


def matches(query: ScoreQuery, score: Score) -> bool:
    """Whether `score` is in the listing `query` asks for (ignoring the page)."""
    return (
        score.tenant == query.tenant
        and (not query.agent_id or score.agent_id == query.agent_id)
        and (not query.thread_id or score.thread_id == query.thread_id)
        and (not query.run_id or score.run_id == query.run_id)
        and (not query.scorer or score.scorer == query.scorer)
        and (query.start is None or score.created_at >= query.start)
        and (query.end is None or score.created_at < query.end)
        and (query.after is None or sort_key(score) < query.after)
    )


def page_of(query: ScoreQuery, candidates: Iterable[Score]) -> ScorePage:
    """The page of `candidates` (newest first, already filtered and ordered, at
    most `limit + 1` of them) `query` asks for."""
    scores = list(candidates)
    more = len(scores) > query.limit
    scores = scores[: query.limit]
    return ScorePage(scores, sort_key(scores[-1]) if more and scores else None)
