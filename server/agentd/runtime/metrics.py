"""The runtime's metrics, on OpenTelemetry's metrics API.

Model calls follow the GenAI conventions (`gen_ai.client.operation.duration`,
`gen_ai.client.token.usage`); the rest is agentd's own (`agentd.*`). Every
label is bounded by configuration: agent ids, processor ids as their classes
declare them, scorer names, models, cache backends, finish reasons; never a thread, run,
resource or tenant id.

Until the server enables metrics there are no instruments: every record
returns before building its attributes, and the OpenTelemetry metrics API is
not even loaded (it is a server with metrics on that needs it). Nothing is recorded per chunk: per run two
counter adds, per model call two or three histogram records. The gauges are
observed, read only when a reader collects (a scrape), on the reader's thread.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentd.runtime.cache import ServerCache
from agentd.runtime.lazy import lazy

if TYPE_CHECKING:
    from opentelemetry import metrics as otel_metrics
    from opentelemetry.metrics import CallbackOptions, Counter, Histogram, Meter, MeterProvider, Observation
else:
    otel_metrics = lazy("opentelemetry.metrics")  # metrics on only: loaded with the first provider

__all__ = ["OFF", "Metrics", "processor_label"]

#: The bucket boundaries the GenAI conventions advise.
_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92)
_TOKEN_BUCKETS = tuple(4**n for n in range(14))  # 1, 4, 16, ... 67,108,864
_SCORE_BUCKETS = tuple(n / 10 for n in range(1, 11))  # 0.1, 0.2, ... 1.0


def processor_label(processor: Any) -> str:
    """A processor's id as its class declares it: a per-call `id` override is
    the caller's to choose, so it would make the label unbounded."""
    declared = getattr(type(processor), "id", "")
    return declared if isinstance(declared, str) and declared else str(getattr(processor, "id", "") or "")


class Metrics:
    """The instruments of one host, from `provider` (none without one: every
    record checks `enabled` first)."""

    _meter: Meter
    _runs_started: Counter
    _runs_finished: Counter
    _tripwires: Counter
    _takeovers: Counter
    _scores: Histogram
    _scores_dropped: Counter
    _operation_duration: Histogram
    _token_usage: Histogram

    def __init__(self, provider: MeterProvider | None = None) -> None:
        self.enabled = provider is not None
        if provider is None:
            return
        self._meter = meter = provider.get_meter("agentd.runtime")
        self._runs_started = meter.create_counter(
            "agentd.runs.started", unit="{run}", description="Runs started, by agent"
        )
        self._runs_finished = meter.create_counter(
            "agentd.runs.finished", unit="{run}", description="Runs finished, by agent and finish reason"
        )
        self._tripwires = meter.create_counter(
            "agentd.tripwires", unit="{tripwire}", description="Tripwires processors raised, by processor"
        )
        self._takeovers = meter.create_counter(
            "agentd.lease.takeovers",
            unit="{thread}",
            description="Threads this replica took over from a lease another replica left",
        )
        self._scores = meter.create_histogram(
            "agentd.scores",
            unit="{score}",  # not "1": Prometheus would name it agentd_scores_ratio
            description="Scores live scorers gave runs, by scorer and agent",
            explicit_bucket_boundaries_advisory=_SCORE_BUCKETS,
        )
        self._scores_dropped = meter.create_counter(
            "agentd.scores.dropped",
            unit="{run}",
            description="Runs not scored because scoring was behind, by agent",
        )
        self._operation_duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self._token_usage = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )

    # ------------------------------------------------------------ runs

    def run_started(self, agent_id: str) -> None:
        if self.enabled:  # off: not even the attributes are built
            self._runs_started.add(1, {"gen_ai.agent.id": agent_id})

    def run_finished(self, agent_id: str, finish_reason: str) -> None:
        if self.enabled:
            self._runs_finished.add(1, {"gen_ai.agent.id": agent_id, "agentd.finish_reason": finish_reason})

    def tripwire(self, processor: str) -> None:
        if self.enabled:
            self._tripwires.add(1, {"agentd.processor.id": processor})

    def score(self, scorer: str, agent_id: str, value: float) -> None:
        if self.enabled:
            self._scores.record(value, {"gen_ai.evaluation.name": scorer, "gen_ai.agent.id": agent_id})

    def score_dropped(self, agent_id: str) -> None:
        if self.enabled:
            self._scores_dropped.add(1, {"gen_ai.agent.id": agent_id})

    def lease_takeover(self) -> None:
        if self.enabled:
            self._takeovers.add(1)

    def model_call(
        self,
        attributes: Mapping[str, str],
        seconds: float,
        *,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        error_type: str | None = None,
    ) -> None:
        """One model call ended (`attributes`: its operation, provider and model)."""
        if not self.enabled:
            return
        timed = attributes if error_type is None else {**attributes, "error.type": error_type}
        self._operation_duration.record(seconds, timed)
        if input_tokens is not None:
            self._token_usage.record(input_tokens, {**attributes, "gen_ai.token.type": "input"})
        if output_tokens is not None:
            self._token_usage.record(output_tokens, {**attributes, "gen_ai.token.type": "output"})

    # ------------------------------------------------------------ what a collection reads

    def observe(
        self,
        *,
        active_runs: Callable[[], int],
        subscriptions: Callable[[], int],
        queued_messages: Callable[[], int],
        caches: Mapping[str, ServerCache],
    ) -> None:
        """Registers the gauges of a host, and its caches' hit and miss counts
        (the counters GetCacheStats reports for this process); none while off."""
        if not self.enabled:
            return
        observation = otel_metrics.Observation

        def gauge(read: Callable[[], int]) -> Callable[[CallbackOptions], list[Observation]]:
            return lambda _: [observation(read())]

        meter = self._meter
        meter.create_observable_up_down_counter(
            "agentd.runs.active", [gauge(active_runs)], unit="{run}", description="Runs in flight in this process"
        )
        meter.create_observable_up_down_counter(
            "agentd.subscriptions.active",
            [gauge(subscriptions)],
            unit="{subscription}",
            description="Thread subscriptions (Subscribe and Connect streams) this process feeds",
        )
        meter.create_observable_up_down_counter(
            "agentd.messages.queued",
            [gauge(queued_messages)],
            unit="{message}",
            description="Messages waiting for their thread's run to end",
        )
        backends = dict(caches)
        meter.create_observable_counter(
            "agentd.cache.hits",
            [lambda _: [observation(c.stats.hits, {"agentd.cache.backend": b}) for b, c in backends.items()]],
            unit="{lookup}",
            description="Server cache lookups that found a value, by backend",
        )
        meter.create_observable_counter(
            "agentd.cache.misses",
            [lambda _: [observation(c.stats.misses, {"agentd.cache.backend": b}) for b, c in backends.items()]],
            unit="{lookup}",
            description="Server cache lookups that found nothing, by backend",
        )


#: The instruments of a host whose metrics are off (shared: a run without a server makes none).
OFF = Metrics()
