"""A live scorer: a name, a sampling rate, and what scores a run that has
answered (Mastra's agent `scorers`).

A scorer's `score` is a function of the `ScoreInput` (sync or async): a
Python function from `--app`, or an LLM judge (`judge_scorer`: a model, a
rubric, and a structured answer `{score, reason}` from the guardrails' judge
call). It returns a number between 0 and 1, a `ScoreResult`, a list of them
(the guardrails' pass-through gives one per guardrail), or None (nothing to
score). A function that raises, or a judge that fails, gives no score: the run
is never touched.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentd.runtime.messages import Message
from agentd.runtime.processors.builtins.judge import call_judge, check_model, quoted, text_of
from agentd.runtime.results import RunResult

__all__ = ["ScoreInput", "ScoreResult", "Scorer", "ScorerOutput", "judge_scorer", "results_of"]

Source = Literal["judge", "function", "guardrails"]


@dataclass(frozen=True, slots=True)
class ScoreInput:
    """What a scorer sees of a run that has answered."""

    agent_id: str
    run_id: str
    #: The caller's messages (not the thread's history).
    input: tuple[Message, ...]
    #: The answer's text.
    output: str
    result: RunResult
    request_context: dict[str, Any] = field(default_factory=dict)

    @property
    def input_text(self) -> str:
        return "\n".join(t for m in self.input if m.role == "user" and (t := text_of(m)))


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """What a scorer said of a run: its value, with the reason and a label."""

    value: float
    reason: str = ""
    label: str = ""
    #: The score's name when not the scorer's (the pass-through's `<scorer>.<guardrail>`).
    name: str = ""


ScorerOutput = float | ScoreResult | Sequence[ScoreResult] | None
ScoreFunction = Callable[[ScoreInput], ScorerOutput | Awaitable[ScorerOutput]]


@dataclass(frozen=True, slots=True)
class Scorer:
    """A named function scoring a share of an agent's runs after they answered."""

    name: str
    score: ScoreFunction
    #: The share of runs it scores, between 0 and 1.
    sampling_rate: float = 1.0
    source: Source = "function"
    #: Scores a run a tripwire ended too (only the guardrails' pass-through:
    #: a blocked run has no answer to judge).
    scores_tripwires: bool = False

    def __post_init__(self) -> None:
        if not self.name or not isinstance(self.name, str):
            raise ValueError("a scorer needs a name")
        rate = self.sampling_rate
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"scorer {self.name!r}: sampling_rate must be a number between 0 and 1 (got {rate!r})")
        if not callable(self.score):
            raise ValueError(f"scorer {self.name!r}: score must be a function of the ScoreInput")


def results_of(output: Any, scorer: str) -> list[ScoreResult]:
    """A scorer's output as results; ValueError when it is not one (a value outside 0-1 too)."""
    if output is None:
        return []
    items = [output] if isinstance(output, (int, float, ScoreResult)) else output
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise ValueError(f"scorer {scorer!r} returned {type(output).__name__}, not a score")
    results: list[ScoreResult] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, float, ScoreResult)):
            raise ValueError(f"scorer {scorer!r} returned {type(item).__name__}, not a score")
        result = item if isinstance(item, ScoreResult) else ScoreResult(float(item))
        if not 0 <= result.value <= 1:
            raise ValueError(f"scorer {scorer!r} returned {result.value}, outside 0-1")
        results.append(result)
    return results


# ---------------------------------------------------------------- the LLM judge

#: The judge's answer: a score between 0 and 1 and why.
VERDICT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "reason": {"type": ["string", "null"]},
    },
    "required": ["score"],
}

JUDGE_SYSTEM = (
    "You are an evaluator. Score the assistant's answer against the rubric you are given, from 0 "
    "(fails it entirely) to 1 (meets it fully). Answer with JSON only: "
    '{"score": <number between 0 and 1>, "reason": "<one or two sentences>"}.'
)

#: What the judge is shown of the run: `prompt(input) -> str`.
Prompt = Callable[[ScoreInput], str]


def default_prompt(run: ScoreInput) -> str:
    return f"The user asked:\n{quoted(run.input_text)}\n\nThe assistant answered:\n{quoted(run.output)}"


def judge_scorer(
    name: str,
    *,
    model: str | None = None,
    rubric: str = "",
    sampling_rate: float = 1.0,
    prompt: Prompt = default_prompt,
    provider_options: dict[str, Any] | None = None,
) -> Scorer:
    """A scorer that asks the judge `model` how well the run meets `rubric`
    (through the guardrails' judge call: temperature 0, the VERDICT schema)."""
    checked = check_model(model, required=True, processor_id=f"scorer {name}")
    assert checked is not None
    if not isinstance(rubric, str) or not rubric.strip():
        raise ValueError(f"scorer {name!r}: rubric must be a non-empty string")
    system = f"{JUDGE_SYSTEM}\n\nRubric:\n{rubric.strip()}"

    async def score(run: ScoreInput) -> ScoreResult | None:
        answer = await call_judge(
            checked,
            system,
            prompt(run),
            VERDICT,
            provider_options=provider_options,
            cancelled=None,
            processor_id=f"scorer.{name}",
            failure_level=logging.DEBUG,  # Scoring logs the failure once, in its own words
        )
        if answer is None:
            raise JudgeFailed(f"the judge {checked} gave no verdict")
        return ScoreResult(float(answer["score"]), str(answer.get("reason") or ""))

    return Scorer(name, score, sampling_rate, "judge")


class JudgeFailed(Exception):
    """The judge call failed or its answer did not match the verdict schema."""
