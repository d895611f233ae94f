"""State signals: a thread's current state in named lanes (the page a browser
shows, the file an editor has open), pushed by a producer that owns a cache key
for each state.

A state signal is skipped when its lane already holds the same cache key and
mode, and otherwise versioned in the thread's metadata, then routed like any
signal. The lanes live under `metadata.agentd.stateSignals`:

    {"<lane>": {"currentCacheKey": ..., "currentMode": "snapshot"|"delta",
                "version": <n>, "lastSignalId": ...}}

The check and the new version are one `Storage.update_thread_metadata` step,
so concurrent sends of one state are routed exactly once (the others are
`skipped_unchanged`), whatever the backend and however many replicas send.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Final, Literal

from agentd.runtime.errors import FieldViolation, InvalidArgument, NotFound
from agentd.runtime.messages import JSON
from agentd.runtime.signals import AttributesInput, ContentPart, Signal, create_signal, normalize_attributes
from agentd.runtime.storage import Storage
from agentd.runtime.threads import Delivery, RouteRequest, Routing, ThreadRuntime
from agentd.runtime.unset import UNSET, Unset

StateMode = Literal["snapshot", "delta"]
#: Where in a thread's metadata the lanes are kept.
METADATA_KEY: Final = "agentd"
LANES_KEY: Final = "stateSignals"


@dataclass(frozen=True, kw_only=True)
class StateSignalRequest(Delivery):
    """One state for a thread's lane, and where and how it is routed."""

    #: The state lane, e.g. "browser".
    lane: str
    #: Producer-owned: the lane's current key and mode again is skipped as unchanged.
    cache_key: str
    mode: StateMode = "snapshot"
    contents: str | tuple[ContentPart, ...] = ""
    #: A structured snapshot and a structured delta, stored in the signal's metadata (not rendered).
    value: JSON | Unset = UNSET
    delta: JSON | Unset = UNSET
    #: Scalar values only.
    attributes: AttributesInput = None
    metadata: dict[str, JSON] | None = None
    provider_options: dict[str, JSON] | None = None
    #: Defaults to "state".
    tag_name: str | None = None
    #: Generated when None.
    signal_id: str | None = None

    def violations(self) -> list[FieldViolation]:
        """What is wrong with the request, by field name (empty when it is valid)."""
        out: list[FieldViolation] = []
        if not self.lane:
            out.append(FieldViolation("lane", "is required (the state lane, e.g. browser)"))
        if not self.cache_key:
            out.append(FieldViolation("cache_key", "is required"))
        if self.mode not in ("snapshot", "delta"):
            out.append(FieldViolation("mode", "must be snapshot or delta"))
        try:
            normalize_attributes(self.attributes, scalar_only=True)
        except InvalidArgument as exc:
            out.extend(exc.violations)
        return out


#: The fields a state signal is routed by, as they are (a state signal is never queued).
ROUTE_FIELDS: Final = tuple(f.name for f in fields(Delivery))


@dataclass(frozen=True)
class StateSignalResult:
    #: `skipped_unchanged` (no signal) or where the new state went (with its signal).
    routing: Routing
    #: The lane's version: the new one, or the current one when skipped.
    version: int


async def send_state_signal(
    request: StateSignalRequest, *, storage: Storage, threads: ThreadRuntime
) -> StateSignalResult:
    """Validates, dedupes and versions the state atomically, then routes it.
    INVALID_ARGUMENT for a bad request, NOT_FOUND (THREAD_NOT_FOUND) when the
    thread does not exist."""
    problems = request.violations()
    if problems:
        raise InvalidArgument.fields(problems)

    def decide(metadata: dict[str, JSON]) -> tuple[dict[str, JSON] | None, tuple[Signal | None, int]]:
        agentd_meta = dict(metadata.get(METADATA_KEY) or {})
        lanes = dict(agentd_meta.get(LANES_KEY) or {})
        lane = dict(lanes.get(request.lane) or {})
        if lane.get("currentCacheKey") == request.cache_key and lane.get("currentMode") == request.mode:
            return None, (None, int(lane.get("version", 1)))
        version = int(lane.get("version", 0)) + 1
        signal = _signal(request, version)
        lanes[request.lane] = {
            "currentCacheKey": request.cache_key,
            "currentMode": request.mode,
            "version": version,
            "lastSignalId": signal.id,
        }
        agentd_meta[LANES_KEY] = lanes
        return {**metadata, METADATA_KEY: agentd_meta}, (signal, version)

    outcome = await storage.update_thread_metadata(request.thread_id, decide)
    if outcome is None:
        raise NotFound(
            f"thread {request.thread_id!r} not found: create it first",
            "THREAD_NOT_FOUND",
            {"thread_id": request.thread_id},
        )
    signal, version = outcome[1]
    if signal is None:
        return StateSignalResult(Routing("skipped_unchanged"), version)
    routing = await threads.route(
        RouteRequest(signal=signal, **{name: getattr(request, name) for name in ROUTE_FIELDS})
    )
    return StateSignalResult(routing, version)


def _signal(request: StateSignalRequest, version: int) -> Signal:
    """The state signal of a new version: its state is in its metadata."""
    metadata = dict(request.metadata or {})
    metadata["state"] = {
        "id": request.lane,
        "cacheKey": request.cache_key,
        "mode": request.mode,
        "version": version,
        "threadId": request.thread_id,
    }
    if not isinstance(request.value, Unset):
        metadata["value"] = request.value
    if not isinstance(request.delta, Unset):
        metadata["delta"] = request.delta
    return create_signal(
        "state",
        request.contents,
        tag_name=request.tag_name,
        attributes=request.attributes,
        metadata=metadata,
        provider_options=request.provider_options,
        id=request.signal_id,
    )
