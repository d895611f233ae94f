"""Live scoring: after a run has answered, its agent's scorers score it in
the background, and each score is stored, put on the run's span as a
`gen_ai.evaluation.result` event and recorded in the score histogram.

Scoring never delays or fails a run: the loop hands the ended run to
`submit` (which returns at once) and the scorers run in a task of their own.
What a scorer does wrong (raises, a judge that fails or answers out of
schema, a store that fails) is logged on `agentd.scoring` and leaves no score.

Bounds: at most `max_pending` runs are being scored at once; a run ended while
that many are pending is not scored (dropped: the `agentd.scores.dropped`
counter, and one warning per burst of drops, with the count once scoring
catches up). Each scorer gets `timeout` seconds. On shutdown `drain` waits for
the pending ones at most its `grace`, then cancels the rest.

Sampling: each scorer scores a run with probability `sampling_rate`, drawn
from this host's random generator (seeded by `[scoring] seed` for tests);
per call, `options.scorers` is "off" (none) or "force" (all).

The run's span is held open by the loop while its scores are pending (ended
with the run's own end time once they are in), so the events land on it.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentd.runtime.agent_definition import AgentDefinition, maybe_await, resolve_dynamic
from agentd.runtime.identity import DEFAULT_TENANT, TENANT_KEY
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import Message, new_id, utcnow
from agentd.runtime.options import ScoringMode
from agentd.runtime.results import RunResult
from agentd.runtime.scoring.store import InMemoryScoreStore, ScoreStore
from agentd.runtime.telemetry import RunTrace

if TYPE_CHECKING:
    from agentd.runtime.scoring import record as _record
    from agentd.runtime.scoring import scorer as _scorer
    from agentd.runtime.scoring.scorer import ScoreInput, Scorer
else:
    _record = lazy("agentd.runtime.scoring.record")  # with the first score
    _scorer = lazy("agentd.runtime.scoring.scorer")  # loaded with the first run an agent's scorers score

__all__ = ["EndedRun", "Scoring", "ScoringSettings"]

log = logging.getLogger("agentd.scoring")


@dataclass(frozen=True, slots=True)
class ScoringSettings:
    """`[scoring]`: how many runs are scored at once, for how long, and the sampling seed."""

    #: Runs scored at once; later ones are dropped until one finishes.
    max_pending: int = 256
    #: Seconds each scorer may take.
    timeout: float = 60.0
    #: Seeds the sampling generator (None: from the system's entropy).
    seed: int | None = None

    def __post_init__(self) -> None:
        if isinstance(self.max_pending, bool) or not isinstance(self.max_pending, int) or self.max_pending < 1:
            raise ValueError(f"max_pending must be a positive whole number (got {self.max_pending!r})")
        if isinstance(self.timeout, bool) or not isinstance(self.timeout, (int, float)) or self.timeout <= 0:
            raise ValueError(f"timeout_seconds must be a positive number (got {self.timeout!r})")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"seed must be a whole number (got {self.seed!r})")


@dataclass(frozen=True, slots=True)
class EndedRun:
    """A run that has ended, as the loop hands it over."""

    agent: AgentDefinition
    result: RunResult
    input: tuple[Message, ...]
    request_context: dict[str, Any]
    mode: ScoringMode | None
    trace: RunTrace

    @property
    def scorable(self) -> bool:
        """A run that failed or was aborted has nothing to score."""
        return self.result.error is None and self.result.aborted is None and self.mode != "off"


@dataclass
class Scoring:
    """Scores the runs that answered in the background, bounded, and keeps the scores."""

    store: ScoreStore = field(default_factory=InMemoryScoreStore)
    settings: ScoringSettings = field(default_factory=ScoringSettings)
    _pending: set[asyncio.Task[None]] = field(default_factory=set, init=False)
    _dropped: int = field(default=0, init=False)
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.settings.seed)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def submit(self, run: EndedRun) -> bool:
        """Schedules the run's scoring; True when its span is now the scoring's
        to end (`RunTrace.release`), False when the caller ends it. Never raises:
        it is called where the run ends."""
        try:
            return self._submit(run)
        except Exception:
            log.exception("run %s of %s could not be scored", run.result.run_id, run.agent.id)
            return False

    def _submit(self, run: EndedRun) -> bool:
        agent = run.agent
        if not run.scorable or (not callable(agent.scorers) and not agent.scorers):
            return False
        chosen: Sequence[Scorer] | None = None
        if not callable(agent.scorers):  # sampled now: a run none is drawn for takes no slot
            chosen = self._sample(agent.scorers, run)
            if not chosen:
                return False
        if len(self._pending) >= self.settings.max_pending:
            self._drop(run)
            return False
        if self._dropped:
            log.warning("scoring caught up: %d run(s) were not scored", self._dropped)
            self._dropped = 0
        task = asyncio.get_running_loop().create_task(self._score(run, chosen), name=f"score {run.result.run_id}")
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        return True

    async def drain(self, grace: float) -> None:
        """Waits at most `grace` seconds for the pending scores, then cancels the rest."""
        pending = list(self._pending)
        if not pending:
            return
        _, still = await asyncio.wait(pending, timeout=grace)
        if still:
            log.warning("shutting down: %d run(s) still being scored after %.1fs are not scored", len(still), grace)
            for task in still:
                task.cancel()
            await asyncio.wait(still)

    # ------------------------------------------------------------ inside

    def _drop(self, run: EndedRun) -> None:
        if not self._dropped:
            log.warning(
                "scoring is behind (%d runs pending): run %s of %s and others until it catches up are not scored",
                len(self._pending),
                run.result.run_id,
                run.agent.id,
            )
        self._dropped += 1
        if run.trace.metrics is not None:
            run.trace.metrics.score_dropped(run.agent.id)

    def _sample(self, scorers: Sequence[Scorer], run: EndedRun) -> list[Scorer]:
        tripped = run.result.tripwire is not None
        eligible = [s for s in scorers if s.scores_tripwires or not tripped]
        if run.mode == "force":
            return eligible
        return [s for s in eligible if self._rng.random() < s.sampling_rate]

    async def _score(self, run: EndedRun, chosen: Sequence[Scorer] | None) -> None:
        try:
            if chosen is None:
                chosen = self._sample(await self._resolve(run), run)
            result = run.result
            seen = _scorer.ScoreInput(
                agent_id=run.agent.id,
                run_id=result.run_id,
                input=run.input,
                output=result.text,
                result=result,
                request_context=dict(run.request_context),
            )
            await asyncio.gather(*(self._one(scorer, seen, run) for scorer in chosen))
        finally:
            run.trace.release()

    async def _resolve(self, run: EndedRun) -> list[Scorer]:
        """The scorers a function of the request context gives ([] when it fails)."""
        try:
            scorers = list(await resolve_dynamic(run.agent.scorers, run.request_context))
            wrong = [type(s).__name__ for s in scorers if not isinstance(s, _scorer.Scorer)]
            if wrong:
                raise TypeError(f"it returned {', '.join(wrong)}, not Scorer")
        except Exception as exc:
            log.warning(
                "the scorers function of %s failed (%s: %s); run %s is not scored",
                run.agent.id,
                type(exc).__name__,
                exc,
                run.result.run_id,
            )
            return []
        return scorers

    async def _one(self, scorer: Scorer, seen: ScoreInput, run: EndedRun) -> None:
        result = run.result
        try:
            async with asyncio.timeout(self.settings.timeout):
                outputs = _scorer.results_of(await maybe_await(scorer.score(seen)), scorer.name)
        except TimeoutError:
            log.warning(
                "scorer %s of %s took over %.1fs on run %s: no score",
                scorer.name,
                seen.agent_id,
                self.settings.timeout,
                result.run_id,
            )
            return
        except Exception as exc:
            log.warning(
                "scorer %s of %s failed on run %s (%s: %s): no score",
                scorer.name,
                seen.agent_id,
                result.run_id,
                type(exc).__name__,
                exc,
            )
            return
        tenant = str(run.request_context.get(TENANT_KEY) or DEFAULT_TENANT)
        for output in outputs:
            score = _record.Score(
                id=new_id("score_"),
                tenant=tenant,
                agent_id=seen.agent_id,
                scorer=output.name or scorer.name,
                run_id=result.run_id,
                value=output.value,
                created_at=utcnow(),
                thread_id=result.thread_id or "",
                resource_id=result.resource_id or "",
                reason=output.reason,
                label=output.label,
                source=scorer.source,
            )
            run.trace.evaluation(score.scorer, score.value, label=score.label, explanation=score.reason)
            if run.trace.metrics is not None:
                run.trace.metrics.score(scorer.name, seen.agent_id, score.value)  # a bounded label
            try:
                await self.store.add(score)
            except Exception as exc:
                log.warning(
                    "score %s of run %s could not be stored (%s: %s)",
                    score.scorer,
                    result.run_id,
                    type(exc).__name__,
                    exc,
                )
