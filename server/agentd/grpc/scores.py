"""ListScoresRequest to a ScoreQuery, and stored scores to the wire."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING

from agentd.grpc import paging
from agentd.grpc.authz import caller
from agentd.grpc.tenancy import scope_id
from agentd.grpc.values import timestamp, to_timestamp
from agentd.grpc.violations import Violations
from agentd.runtime.lazy import lazy
from agentd_proto.v1 import score_pb2 as spb

if TYPE_CHECKING:
    from agentd.runtime.scoring import record as _record
    from agentd.runtime.scoring.record import Score, ScoreQuery
else:
    _record = lazy("agentd.runtime.scoring.record")  # with the first ListScores

__all__ = ["next_page_token", "score_query", "score_to_pb"]


def score_query(request: spb.ListScoresRequest, v: Violations) -> tuple[ScoreQuery, str]:
    """The query (one INVALID_ARGUMENT lists every problem), and the kind its
    page tokens are bound to: the filters, so a token serves only its own list."""
    size = paging.page_size(request.page_size, "page_size", v)
    start = timestamp(request.start_time, "start_time", v) if request.HasField("start_time") else None
    end = timestamp(request.end_time, "end_time", v) if request.HasField("end_time") else None
    if start is not None and end is not None and end <= start:
        v.add("end_time", "must be after start_time")
    filters = [request.agent_id, request.thread_id, request.run_id, request.scorer]
    filters += [request.start_time.ToJsonString() if start else "", request.end_time.ToJsonString() if end else ""]
    kind = "scores:" + json.dumps(filters, separators=(",", ":"))
    v.check()
    cursor = paging.decode(kind, request.page_token)
    after: tuple[datetime, str] | None = None
    if cursor is not None:
        try:
            when, id = cursor
            after = (datetime.fromisoformat(when), str(id))
        except (TypeError, ValueError):
            v.add("page_token", "is not a page token this list issued")
            v.check()
    query = _record.ScoreQuery(
        tenant=caller().tenant,
        agent_id=request.agent_id,
        thread_id=scope_id(request.thread_id, "thread_id") if request.thread_id else "",
        run_id=request.run_id,
        scorer=request.scorer,
        start=start,
        end=end,
        limit=size,
        after=after,
    )
    return query, kind


def next_page_token(kind: str, cursor: tuple[datetime, str] | None) -> str:
    return paging.encode(kind, [cursor[0].isoformat(), cursor[1]]) if cursor is not None else ""


def score_to_pb(score: Score) -> spb.Score:
    return spb.Score(
        id=score.id,
        agent_id=score.agent_id,
        scorer=score.scorer,
        run_id=score.run_id,
        thread_id=score.thread_id,
        resource_id=score.resource_id,
        value=score.value,
        reason=score.reason,
        label=score.label,
        source=score.source,
        create_time=to_timestamp(score.created_at),
    )
