"""agentd.toml's scoring: each agent's `[[agents.scorers]]` and the score
store beside the storage (the `[scoring]` table is settings.py's)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentd.runtime.lazy import lazy
from agentd.runtime.scoring.store import InMemoryScoreStore, ScoreStore
from agentd.settings import StorageSettings

if TYPE_CHECKING:
    from agentd.runtime.scoring import builtins as scorers
    from agentd.runtime.scoring.scorer import Scorer
else:
    scorers = lazy("agentd.runtime.scoring.builtins")  # an agent's `[[agents.scorers]]` only

__all__ = ["ScoringConfigError", "build_score_store", "parse_scorers"]

_SCORER_KEYS = {"name", "kind", "sampling_rate", "model", "rubric", "provider_options"}


class ScoringConfigError(ValueError):
    """The message names the offending key (config.py raises it as a ConfigError)."""


def _check_keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ScoringConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
        )


def parse_scorers(entries: Any, where: str) -> list[Scorer]:
    """`[[agents.scorers]]`: {name, kind = judge | answer-relevancy | faithfulness | toxicity | guardrails,
    sampling_rate, model, rubric (judge only), provider_options}."""
    if not isinstance(entries, list):
        raise ScoringConfigError(f"{where}: a list of scorer tables")
    out: list[Scorer] = []
    names: set[str] = set()
    for i, entry in enumerate(entries):
        item = f"{where}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
            raise ScoringConfigError(f"{item}: a table with a name (and kind, sampling_rate, model, rubric)")
        _check_keys(entry, _SCORER_KEYS, item)
        if entry["name"] in names:
            raise ScoringConfigError(f"{item}.name: {entry['name']!r} is defined twice")
        names.add(entry["name"])
        options = {k: v for k, v in entry.items() if k not in ("name", "kind")}
        try:
            out.append(scorers.build_scorer(str(entry.get("kind", entry["name"])), entry["name"], **options))
        except ValueError as exc:
            raise ScoringConfigError(f"{item}: {exc}") from None
    return out


def build_score_store(settings: StorageSettings, base: Path | None = None) -> ScoreStore:
    """Scores beside the threads: in the SQLite file or on the Redis server, else in memory."""
    if settings.backend == "redis":
        from agentd.backends.redis_scores import RedisScoreStore

        return RedisScoreStore(settings.redis_url, key_prefix=settings.key_prefix)
    if settings.backend == "sqlite":
        from agentd.backends.sqlite_scores import SQLiteScoreStore

        path = Path(settings.path)
        return SQLiteScoreStore(path if path.is_absolute() or base is None else base / path)
    return InMemoryScoreStore()
