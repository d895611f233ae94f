"""Live scorers over a real server: sampling at the configured rate (a seeded
generator, 1,000 runs), a judge or a function that fails leaves the run as it
was, per-call off and force, ListScores filters and pages, the
`gen_ai.evaluation.result` event on the run's span, the score histogram, and
scorers from agentd.toml (the built-in judges and the guardrails' pass-through)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from agentd_client import AgentdClient
from google.protobuf import timestamp_pb2
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentd import config
from agentd.backends.redis_scores import RedisScoreStore
from agentd.backends.sqlite_scores import SQLiteScoreStore
from agentd.grpc.auth import Authenticator, Credential, hash_token, identity
from agentd.grpc.gate import Gate
from agentd.runtime import (
    Agent,
    InMemoryScoreStore,
    RunResult,
    ScoreInput,
    ScoreQuery,
    Scorer,
    ScoreResult,
    ScoringSettings,
    StepResult,
    Tool,
    build_scorer,
    judge_scorer,
)
from agentd.runtime.memory import Memory
from agentd.runtime.messages import ToolResultPart, utcnow
from agentd.runtime.processors.builtins.moderation import ModerationProcessor
from agentd.runtime.scoring.builtins import faithfulness_prompt
from agentd.runtime.storage import InMemoryStorage
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import score_pb2 as spb
from support.metrics import scraped, value
from support.polling import until
from support.server import Running, start_server


def judge_says(answer: Any) -> dict[str, Any]:
    """Provider options that make the local/scripted judge answer this (a dict: its JSON)."""
    return {"local": {"script": [{"text": answer if isinstance(answer, str) else json.dumps(answer)}]}}


JUDGE_FAILS = {"local": {"script": [{"error": {"message": "judge overloaded", "status": 503}}]}}


def agent(*scorers: Scorer | Callable[..., Any], id: str = "scored") -> Agent:
    dynamic = len(scorers) == 1 and not isinstance(scorers[0], Scorer)
    return Agent(id=id, model="local/echo", scorers=scorers[0] if dynamic else list(scorers))  # type: ignore[arg-type]


def generate(text: str = "hello there", agent_id: str = "scored", mode: int = 0, **memory: str) -> apb.GenerateRequest:
    options = opb.ExecutionOptions()
    if mode:
        options.scorers.mode = mode  # type: ignore[assignment]
    if memory:
        options.memory.resource = memory["resource"]
        options.memory.thread_id = memory["thread"]
    return apb.GenerateRequest(agent_id=agent_id, text=text, options=options)


async def settled(running: Running) -> None:
    """Waits (polling) until no run is being scored."""
    await until(lambda: running.host.scoring.pending == 0, step=0.005, what="scoring to settle")


async def all_scores(running: Running, **filters: Any) -> list[spb.Score]:
    scores: list[spb.Score] = []
    token = ""
    while True:
        page = await running.agents.ListScores(spb.ListScoresRequest(page_size=1000, page_token=token, **filters))
        scores.extend(page.scores)
        token = page.next_page_token
        if not token:
            return scores


def constant(value: float, **fields: Any) -> Callable[[ScoreInput], ScoreResult]:
    return lambda run: ScoreResult(value, **fields)


# ---------------------------------------------------------------- sampling


async def test_a_scorer_samples_runs_at_its_rate_with_a_seeded_generator() -> None:
    scored: list[str] = []

    def count(run: ScoreInput) -> float:
        scored.append(run.run_id)
        return 1.0

    running = await start_server(
        [agent(Scorer("sampled", count, sampling_rate=0.3), Scorer("every", constant(0.5)))],
        scoring_settings=ScoringSettings(seed=7),
    )
    try:
        for _ in range(1000):
            await running.agents.Generate(generate())
        await settled(running)
        assert 250 <= len(scored) <= 350  # 0.3 of 1,000, within five standard deviations (sd 14.5)
        assert len(set(scored)) == len(scored)
        stored = await all_scores(running, scorer="sampled")
        assert sorted(s.run_id for s in stored) == sorted(scored)
        assert len(await all_scores(running, scorer="every")) == 1000  # rate 1: every run
    finally:
        await running.close()


async def test_the_same_seed_samples_the_same_runs() -> None:
    async def sampled_count() -> int:
        running = await start_server(
            [agent(Scorer("half", constant(1.0), sampling_rate=0.5))], scoring_settings=ScoringSettings(seed=42)
        )
        try:
            for _ in range(40):
                await running.agents.Generate(generate())
            await settled(running)
            return len(await all_scores(running))
        finally:
            await running.close()

    assert await sampled_count() == await sampled_count()


# ---------------------------------------------------------------- failures leave the run alone


async def test_a_judge_that_fails_leaves_the_run_untouched(caplog: pytest.LogCaptureFixture) -> None:
    failing = judge_scorer("relevancy", model="local/scripted", rubric="Is it relevant?", provider_options=JUDGE_FAILS)
    unscored = Agent(id="plain", model="local/echo")
    running = await start_server([agent(failing), unscored])
    try:
        with caplog.at_level(logging.WARNING, logger="agentd.scoring"):
            reply = await running.agents.Generate(generate("tell me a story"))
            baseline = await running.agents.Generate(generate("tell me a story", agent_id="plain"))
            await settled(running)
        assert reply.text == baseline.text == "tell me a story"
        assert reply.finish_reason == baseline.finish_reason
        assert await all_scores(running) == []
        assert any("scorer relevancy of scored failed" in r.getMessage() for r in caplog.records)
    finally:
        await running.close()


async def test_a_judge_that_answers_out_of_schema_or_a_raising_function_gives_no_score() -> None:
    def broken(run: ScoreInput) -> float:
        raise RuntimeError("bug in the scorer")

    running = await start_server(
        [
            agent(
                judge_scorer(
                    "bad-judge", model="local/scripted", rubric="r", provider_options=judge_says({"score": 7})
                ),
                Scorer("broken", broken),
                Scorer("out-of-range", constant(1.5)),
                Scorer("fine", constant(0.25)),
            )
        ]
    )
    try:
        reply = await running.agents.Generate(generate("hi"))
        assert reply.text == "hi"
        await settled(running)
        assert [s.scorer for s in await all_scores(running)] == ["fine"]
    finally:
        await running.close()


async def test_a_judge_scores_with_its_reason() -> None:
    judge = judge_scorer(
        "relevancy",
        model="local/scripted",
        rubric="Is it relevant?",
        provider_options=judge_says({"score": 0.75, "reason": "mostly on topic"}),
    )
    running = await start_server([agent(judge)])
    try:
        reply = await running.agents.Generate(generate())
        await settled(running)
        (score,) = await all_scores(running)
        assert (score.scorer, score.value, score.reason, score.source) == (
            "relevancy",
            0.75,
            "mostly on topic",
            "judge",
        )
        assert score.run_id == reply.run_id and score.agent_id == "scored"
    finally:
        await running.close()


async def test_a_slow_scorer_does_not_delay_the_run_and_an_async_one_scores() -> None:
    release = asyncio.Event()

    async def slow(run: ScoreInput) -> float:
        await release.wait()
        return 0.5

    running = await start_server([agent(Scorer("slow", slow))])
    try:
        reply = await running.agents.Generate(generate("quick"))  # answers while the scorer waits
        assert reply.text == "quick"
        assert running.host.scoring.pending == 1
        release.set()
        await settled(running)
        assert [s.value for s in await all_scores(running)] == [0.5]
    finally:
        await running.close()


async def test_runs_past_max_pending_are_dropped_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    release = asyncio.Event()

    async def slow(run: ScoreInput) -> float:
        await release.wait()
        return 1.0

    running = await start_server([agent(Scorer("slow", slow))], scoring_settings=ScoringSettings(max_pending=2))
    try:
        with caplog.at_level(logging.WARNING, logger="agentd.scoring"):
            for _ in range(5):
                await running.agents.Generate(generate())
            assert running.host.scoring.pending == 2
            release.set()
            await settled(running)
            await running.agents.Generate(generate())
            await settled(running)
        behind = [r for r in caplog.records if "scoring is behind" in r.getMessage()]
        assert len(behind) == 1
        assert any("3 run(s) were not scored" in r.getMessage() for r in caplog.records)
        assert len(await all_scores(running)) == 3
    finally:
        await running.close()


async def test_shutdown_waits_for_pending_scores_within_the_grace() -> None:
    started = asyncio.Event()

    async def slow(run: ScoreInput) -> float:
        started.set()
        await asyncio.sleep(0.05)
        return 0.9

    running = await start_server([agent(Scorer("slow", slow))])
    host = running.host
    await running.agents.Generate(generate())
    await started.wait()
    await running.channel.close()
    await running.server.stop(grace=5)
    page = await host.score_store.list(ScoreQuery("default"))
    assert [s.value for s in page.scores] == [0.9]


# ---------------------------------------------------------------- per call


async def test_per_call_off_turns_scorers_off_and_force_overrides_the_rate() -> None:
    running = await start_server(
        [agent(Scorer("always", constant(1.0)), Scorer("never", constant(0.0), sampling_rate=0.0))]
    )
    try:
        off = await running.agents.Generate(generate(mode=opb.SCORING_MODE_OFF))
        forced = await running.agents.Generate(generate(mode=opb.SCORING_MODE_FORCE))
        plain = await running.agents.Generate(generate())
        await settled(running)
        assert await all_scores(running, run_id=off.run_id) == []
        assert sorted(s.scorer for s in await all_scores(running, run_id=forced.run_id)) == ["always", "never"]
        assert [s.scorer for s in await all_scores(running, run_id=plain.run_id)] == ["always"]
    finally:
        await running.close()


async def test_an_unknown_scoring_mode_is_invalid_argument() -> None:
    running = await start_server([agent(Scorer("always", constant(1.0)))])
    try:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await running.agents.Generate(generate(mode=9))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "options.scorers.mode" in (err.value.details() or "")
    finally:
        await running.close()


async def test_scorers_may_be_a_function_of_the_request_context() -> None:
    def by_plan(context: dict[str, Any]) -> list[Scorer]:
        return [Scorer("premium", constant(1.0))] if context.get("plan") == "premium" else []

    running = await start_server([agent(by_plan)])
    try:
        request = generate()
        request.options.request_context.update({"plan": "premium"})
        premium = await running.agents.Generate(request)
        free = await running.agents.Generate(generate())
        await settled(running)
        assert [s.run_id for s in await all_scores(running)] == [premium.run_id]
        assert free.run_id
    finally:
        await running.close()


# ---------------------------------------------------------------- ListScores


async def test_list_scores_filters_by_agent_thread_run_and_time_and_pages() -> None:
    running = await start_server(
        [agent(Scorer("a", constant(0.1)), Scorer("b", constant(0.2))), agent(Scorer("a", constant(0.3)), id="other")]
    )
    try:
        before = utcnow()
        first = await running.agents.Generate(generate(resource="u1", thread="t1"))
        await settled(running)
        middle = utcnow()
        second = await running.agents.Generate(generate(resource="u1", thread="t2"))
        third = await running.agents.Generate(generate(agent_id="other"))
        await settled(running)

        everything = await all_scores(running)
        assert len(everything) == 5
        times = [(s.create_time.ToDatetime(), s.id) for s in everything]
        assert times == sorted(times, reverse=True)  # newest first
        assert {s.run_id for s in await all_scores(running, agent_id="other")} == {third.run_id}
        assert {s.scorer for s in await all_scores(running, thread_id="t1")} == {"a", "b"}
        assert {s.run_id for s in await all_scores(running, thread_id="t2")} == {second.run_id}
        assert (await all_scores(running, thread_id="t1"))[0].resource_id == "u1"
        assert len(await all_scores(running, run_id=first.run_id, scorer="b")) == 1

        def ts(when: Any) -> timestamp_pb2.Timestamp:
            out = timestamp_pb2.Timestamp()
            out.FromDatetime(when)
            return out

        early = await all_scores(running, start_time=ts(before), end_time=ts(middle))
        assert {s.run_id for s in early} == {first.run_id}
        late = await all_scores(running, start_time=ts(middle))
        assert {s.run_id for s in late} == {second.run_id, third.run_id}
        assert await all_scores(running, end_time=ts(before - timedelta(seconds=1))) == []

        seen: list[str] = []
        token = ""
        for _ in range(5):
            page = await running.agents.ListScores(spb.ListScoresRequest(page_size=2, page_token=token))
            assert len(page.scores) <= 2
            seen.extend(s.id for s in page.scores)
            token = page.next_page_token
            if not token:
                break
        assert seen == [s.id for s in everything]

        page = await running.agents.ListScores(spb.ListScoresRequest(page_size=2))
        with pytest.raises(grpc.aio.AioRpcError) as err:  # a token serves only the list it came from
            await running.agents.ListScores(
                spb.ListScoresRequest(page_size=2, agent_id="other", page_token=page.next_page_token)
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        for bad in (
            spb.ListScoresRequest(page_size=-1),
            spb.ListScoresRequest(page_token="garbage"),
            spb.ListScoresRequest(start_time=ts(middle), end_time=ts(before)),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await running.agents.ListScores(bad)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    finally:
        await running.close()


# ---------------------------------------------------------------- telemetry


async def test_each_score_is_an_evaluation_event_on_the_runs_span_and_a_histogram_record() -> None:
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    running = await start_server(
        [agent(Scorer("quality", constant(0.8, reason="clear", label="pass")))], tracer_provider=tracer
    )
    running.host.enable_metrics(MeterProvider(metric_readers=[reader]))
    try:
        reply = await running.agents.Generate(generate())
        await settled(running)
    finally:
        await running.close()
    (run,) = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    assert run.attributes is not None and run.attributes["agentd.run.id"] == reply.run_id
    (event,) = [e for e in run.events if e.name == "gen_ai.evaluation.result"]
    assert dict(event.attributes or {}) == {
        "gen_ai.evaluation.name": "quality",
        "gen_ai.evaluation.score.value": 0.8,
        "gen_ai.evaluation.score.label": "pass",
    }  # the explanation only with content capture: a judge's reason may quote the answer
    assert run.end_time is not None and run.start_time is not None and run.end_time <= event.timestamp
    data = reader.get_metrics_data()
    points = [
        p
        for rm in data.resource_metrics
        for sm in rm.scope_metrics
        for m in sm.metrics
        if m.name == "agentd.scores"
        for p in m.data.data_points
    ]
    assert [(dict(p.attributes), p.count, p.sum) for p in points] == [
        ({"gen_ai.evaluation.name": "quality", "gen_ai.agent.id": "scored"}, 1, 0.8)
    ]


async def test_the_reason_is_the_events_explanation_only_with_content_capture(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    running = await start_server([agent(Scorer("quality", constant(0.4, reason="vague")))], tracer_provider=tracer)
    try:
        await running.agents.Generate(generate())
        await settled(running)
    finally:
        await running.close()
    (run,) = [s for s in exporter.get_finished_spans() if s.name.startswith("invoke_agent")]
    (event,) = [e for e in run.events if e.name == "gen_ai.evaluation.result"]
    assert (event.attributes or {})["gen_ai.evaluation.explanation"] == "vague"
    assert "gen_ai.evaluation.score.label" not in (event.attributes or {})  # no label given: none set


async def test_the_scrape_endpoint_has_the_score_histogram_and_the_dropped_runs() -> None:
    release = asyncio.Event()

    async def slow(run: ScoreInput) -> float:
        await release.wait()
        return 0.7

    running = await start_server(
        [agent(Scorer("slow", slow))], scoring_settings=ScoringSettings(max_pending=1), metrics_port=0
    )
    try:
        for _ in range(3):
            await running.agents.Generate(generate())
        release.set()
        await settled(running)
        port = running.server.metrics_port
        assert port is not None
        samples = await scraped(port)
    finally:
        await running.close()
    labels = {"gen_ai_evaluation_name": "slow", "gen_ai_agent_id": "scored"}
    assert value(samples, "agentd_scores_count", **labels) == 1
    assert value(samples, "agentd_scores_sum", **labels) == 0.7
    assert value(samples, "agentd_scores_bucket", **labels, le="0.7") == 1
    assert value(samples, "agentd_scores_dropped_total", gen_ai_agent_id="scored") == 2


# ---------------------------------------------------------------- agentd.toml


TOML = """
[scoring]
seed = 3

[[agents]]
id = "toml-scored"
model = "local/echo"
input_processors = [
  { name = "moderation", options = { model = "local/scripted", strategy = "block", providerOptions = MODERATION } },
]

[[agents.scorers]]
name = "relevancy"
kind = "answer-relevancy"
model = "local/scripted"
provider_options = RELEVANT

[[agents.scorers]]
name = "guards"
kind = "guardrails"
"""


async def test_scorers_from_agentd_toml_built_ins_and_the_guardrails_pass_through(tmp_path: Path) -> None:
    def inline(value: Any) -> str:
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{json.dumps(k)} = {inline(v)}" for k, v in value.items()) + " }"
        if isinstance(value, list):
            return "[" + ", ".join(inline(v) for v in value) + "]"
        return json.dumps(value)

    hateful = {"category_scores": [{"category": "hate", "score": 0.92}], "reason": "hateful"}
    text = TOML.replace("MODERATION", inline({"local": {"scripts": {"scripted": [{"text": json.dumps(hateful)}]}}}))
    text = text.replace("RELEVANT", inline(judge_says({"score": 0.9, "reason": "on topic"})))
    path = tmp_path / "agentd.toml"
    path.write_text(text)
    loaded = config.load(path, env={})
    assert loaded.scoring.seed == 3
    running = await start_server(loaded.agents, scoring_settings=loaded.scoring)
    try:
        blocked = await running.agents.Generate(generate("something hateful", agent_id="toml-scored"))
        assert blocked.HasField("tripwire")
        await settled(running)
        (score,) = await all_scores(running)
        assert (score.scorer, score.value, score.label, score.source) == (
            "guards.moderation",
            0.92,
            "blocked",
            "guardrails",
        )
    finally:
        await running.close()


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ('name = "x"\nkind = "nope"', "unknown scorer 'nope'"),
        ('name = "x"\nkind = "judge"\nmodel = "local/scripted"', "rubric"),
        ('name = "x"\nkind = "toxicity"', "model is required"),
        ('name = "x"\nkind = "guardrails"\nsampling_rate = 2', "sampling_rate"),
        ('name = "x"\nkind = "guardrails"\ncolour = 1', "unknown key(s) colour"),
    ],
)
def test_a_bad_scorer_in_agentd_toml_names_its_key(tmp_path: Path, entry: str, problem: str) -> None:
    path = tmp_path / "agentd.toml"
    path.write_text(f'[[agents]]\nid = "a"\n[[agents.scorers]]\n{entry}\n')
    with pytest.raises(config.ConfigError) as err:
        config.load(path, env={})
    assert "agents[0].scorers[0]" in str(err.value) and problem in str(err.value)


# ---------------------------------------------------------------- tenancy


async def test_scores_are_the_tenants_and_the_resources_a_caller_may_act_for() -> None:
    tokens = {
        "acme": ("agentd_acme-writer-0123456789abcdef", "acme", ["writer"], ["*"]),
        "acme-u2": ("agentd_acme-reader-u2-0123456789ab", "acme", ["reader"], ["u2"]),
        "globex": ("agentd_globex-admin-0123456789abcde", "globex", ["admin"], ["*"]),
    }
    authenticator = Authenticator(
        ("token",),
        tokens=[
            Credential(hash_token(token), identity(tenant, name, roles, resources, "token", "test"))
            for name, (token, tenant, roles, resources) in tokens.items()
        ],
    )
    storage = InMemoryStorage()
    running = await start_server(
        [Agent(id="scored", memory=Memory(storage), scorers=[Scorer("s", constant(0.5))])],
        storage=storage,
        gate=Gate(authenticator),
    )

    def bearer(name: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {tokens[name][0]}"),)

    try:
        reply = await running.agents.Generate(generate(resource="u1", thread="t1"), metadata=bearer("acme"))
        await settled(running)
        mine = await running.agents.ListScores(spb.ListScoresRequest(thread_id="t1"), metadata=bearer("acme"))
        assert [(s.run_id, s.thread_id, s.resource_id) for s in mine.scores] == [(reply.run_id, "t1", "u1")]
        for name in ("globex", "acme-u2"):
            for request in (spb.ListScoresRequest(), spb.ListScoresRequest(thread_id="t1")):
                theirs = await running.agents.ListScores(request, metadata=bearer(name))
                assert list(theirs.scores) == [], name
    finally:
        await running.close()


def lookup(args: Any, context: Any) -> Any:
    return {"capital": "Paris"}


async def test_faithfulness_scores_runs_with_tool_results_and_toxicity_any_answer() -> None:
    faithful = build_scorer(
        "faithfulness", "faithful", model="local/scripted", provider_options=judge_says({"score": 1, "reason": "ok"})
    )
    toxic = build_scorer("toxicity", "toxic", model="local/scripted", provider_options=judge_says({"score": 0.0}))
    running = await start_server(
        [Agent(id="scored", model="local/echo", tools=[Tool("lookup", "Looks up", lookup)], scorers=[faithful, toxic])]
    )
    try:
        request = generate("capital of France?")
        request.options.provider_options.update(
            {
                "local": {
                    "script": [
                        {"toolCalls": [{"id": "c1", "name": "lookup", "args": {}}]},
                        {"text": "Paris is the capital."},
                    ]
                }
            }
        )
        with_tools = await running.agents.Generate(request)
        without = await running.agents.Generate(generate("hello"))
        await settled(running)
        assert sorted(s.scorer for s in await all_scores(running, run_id=with_tools.run_id)) == ["faithful", "toxic"]
        assert [s.scorer for s in await all_scores(running, run_id=without.run_id)] == ["toxic"]
    finally:
        await running.close()
    seen = ScoreInput("scored", "r", (), "Paris is the capital.", RunResult("r", "scored"))
    seen.result.steps.append(StepResult(0, tool_results=[ToolResultPart("c1", "lookup", {"capital": "Paris"})]))
    assert '{"capital": "Paris"}' in faithfulness_prompt(seen)


def test_the_readme_scorers_example_loads(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Live scorers\n", 1)[1].split("\n## ", 1)[0]
    example = section.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "agentd.toml"
    path.write_text('[[agents]]\nid = "support"\nmodel = "local/echo"\n' + example)
    loaded = config.load(path, env={})
    assert [(s.name, s.sampling_rate, s.source) for s in loaded.agents[0].scorers] == [  # type: ignore[union-attr]
        ("relevancy", 0.1, "judge"),
        ("tone", 1.0, "judge"),
    ]
    assert (loaded.scoring.max_pending, loaded.scoring.timeout, loaded.scoring.seed) == (256, 60, 7)


async def test_scores_on_sqlite_outlive_the_server(tmp_path: Path) -> None:
    path = tmp_path / "agentd.db"
    first = await start_server([agent(Scorer("s", constant(0.6)))], score_store=SQLiteScoreStore(path))
    try:
        reply = await first.agents.Generate(generate())
        await settled(first)
    finally:
        await first.close()
    second = await start_server([agent(Scorer("s", constant(0.6)))], score_store=SQLiteScoreStore(path))
    try:
        assert [(s.run_id, s.value) for s in await all_scores(second)] == [(reply.run_id, 0.6)]
    finally:
        await second.close()


def test_the_score_store_follows_the_storage_backend(tmp_path: Path) -> None:
    for backend, kind in (("sqlite", SQLiteScoreStore), ("memory", InMemoryScoreStore), ("redis", RedisScoreStore)):
        path = tmp_path / f"{backend}.toml"
        extra = '\nredis_url = "redis://127.0.0.1:1/0"' if backend == "redis" else ""
        path.write_text(f'[storage]\nbackend = "{backend}"{extra}\n')
        assert isinstance(config.load(path, env={}).scores, kind), backend


async def test_a_scorers_function_that_fails_or_returns_no_scorers_leaves_the_run_alone(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def scorers(context: dict[str, Any]) -> Any:
        if context.get("break"):
            raise RuntimeError("no scorers today")
        return ["not a scorer"]

    running = await start_server([agent(scorers)])
    try:
        with caplog.at_level(logging.WARNING, logger="agentd.scoring"):
            broken = generate("one")
            broken.options.request_context.update({"break": True})
            assert (await running.agents.Generate(broken)).text == "one"
            assert (await running.agents.Generate(generate("two"))).text == "two"
            await settled(running)
        assert await all_scores(running) == []
        failures = [r.getMessage() for r in caplog.records if "scorers function of scored failed" in r.getMessage()]
        assert len(failures) == 2 and "not Scorer" in failures[1]
    finally:
        await running.close()


async def test_the_python_client_forces_scoring_and_lists_scores() -> None:
    running = await start_server([agent(Scorer("rare", constant(0.3), sampling_rate=0.0))])
    try:
        async with AgentdClient(running.addr) as client:
            forced = await client.generate("scored", "hi", scorers="force")
            await client.generate("scored", "hi")
            await settled(running)
            listed = [s async for s in client.list_scores(agent_id="scored", start_time=utcnow() - timedelta(hours=1))]
            assert [(s.run_id, s.scorer, s.value) for s in listed] == [(forced.run_id, "rare", 0.3)]
            with pytest.raises(ValueError):
                await client.generate("scored", "hi", scorers="sometimes")
    finally:
        await running.close()


async def test_the_guardrails_pass_through_scores_a_warned_run_too() -> None:
    hateful = {"category_scores": [{"category": "hate", "score": 0.81}], "reason": "hateful"}
    moderation = ModerationProcessor(model="local/scripted", strategy="warn", provider_options=judge_says(hateful))
    running = await start_server(
        [
            Agent(
                id="scored",
                model="local/echo",
                input_processors=[moderation],
                scorers=[build_scorer("guardrails", "guards")],
            )
        ]
    )
    try:
        reply = await running.agents.Generate(generate("something hateful"))
        assert reply.text == "something hateful" and not reply.HasField("tripwire")  # warned, not blocked
        await settled(running)
        (score,) = await all_scores(running)
        assert (score.scorer, score.value, score.label, score.run_id) == (
            "guards.moderation",
            0.81,
            "flagged",
            reply.run_id,
        )
        assert "hate" in score.reason
    finally:
        await running.close()


def test_the_scoring_table_comes_from_the_environment_too(tmp_path: Path) -> None:
    path = tmp_path / "agentd.toml"
    path.write_text("[scoring]\nmax_pending = 10\nseed = 1\n")
    loaded = config.load(path, env={"AGENTD_SCORING__SEED": "5", "AGENTD_SCORING__TIMEOUT_SECONDS": "2.5"})
    assert (loaded.scoring.max_pending, loaded.scoring.timeout, loaded.scoring.seed) == (10, 2.5, 5)
    for bad, key in (("max_pending = 0", "max_pending"), ("seed = true", "seed"), ("colour = 1", "colour")):
        path.write_text(f"[scoring]\n{bad}\n")
        with pytest.raises(config.ConfigError) as err:
            config.load(path, env={})
        assert str(err.value).startswith("scoring") and key in str(err.value), str(err.value)
