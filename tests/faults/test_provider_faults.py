"""A provider that fails under concurrency: 20 runs at once against the fake
OpenAI server, each meeting its own fault (429 then 500 then an answer, a
stream cut mid-way, a model that always fails so the fallback answers, or
both models failing). Every run ends, with `finish` or an error chunk
MODEL_ERROR; none is left running; the fake saw exactly the retries and the
fallbacks the agent's stream-error-retry-processor and fallback_models call for."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentd import config
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from fakes.base import ErrorReply, RecordedRequest
from fakes.openai_server import FakeOpenAIServer, SSEReply, error_body, text_reply
from support.polling import until
from support.server import Running, start_server

from .harness import kind

pytestmark = pytest.mark.timeout(60)

AGENTS = """
[[agents]]
id = "flaky"
model = "openai/gpt-main"
fallback_models = ["openai/gpt-backup"]
error_processors = [ { name = "stream-error-retry-processor", options = { maxRetries = 2 } } ]
"""

RUNS = 20
RATE_LIMITED = ErrorReply(429, error_body("slow down", "requests", "rate_limit_exceeded"), {"retry-after": "0"})
SERVER_ERROR = ErrorReply(500, error_body("boom", "server_error"))


def answer(case: str, model: str) -> SSEReply:
    return text_reply("answer ", f"{case} from {model}")


def cut(case: str, model: str) -> SSEReply:
    """Two chunks of an answer, then the connection drops (no [DONE])."""
    reply = answer(case, model)
    reply.disconnect_after = 2
    return reply


#: Each kind of case: the replies of each model, attempt after attempt (the last repeats),
#: and how the run ends.
SCRIPTS: dict[str, tuple[dict[str, list[object]], str]] = {
    "recovers": ({"gpt-main": [RATE_LIMITED, SERVER_ERROR, answer]}, "gpt-main"),
    "falls-back": ({"gpt-main": [SERVER_ERROR], "gpt-backup": [answer]}, "gpt-backup"),
    "cut-once": ({"gpt-main": [cut, answer]}, "gpt-main"),
    "cut-always": ({"gpt-main": [cut], "gpt-backup": [answer]}, "gpt-backup"),
    "all-fail": ({"gpt-main": [SERVER_ERROR], "gpt-backup": [RATE_LIMITED]}, ""),
}


class ScriptedOpenAI(FakeOpenAIServer):
    """Answers each request by its case (named in the prompt) and model, attempt by attempt."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts: Counter[tuple[str, str]] = Counter()

    def pick(self, request: RecordedRequest) -> SSEReply | ErrorReply:  # type: ignore[override]
        body = request.body
        model = body["model"]
        case = json.dumps(body["messages"]).split("case ")[1].split('"')[0]
        script = SCRIPTS[case.rsplit("-", 1)[0]][0].get(model, [SERVER_ERROR])
        step = script[min(self.attempts[(case, model)], len(script) - 1)]
        self.attempts[(case, model)] += 1
        return step(case, model) if callable(step) else step  # type: ignore[return-value]


@pytest.fixture
async def provider(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ScriptedOpenAI]:
    async with ScriptedOpenAI() as fake:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake


@pytest.fixture
async def running(provider: ScriptedOpenAI, tmp_path: Path) -> AsyncIterator[Running]:
    (tmp_path / "agentd.toml").write_text(AGENTS)
    server = await start_server(list(config.load(tmp_path / "agentd.toml", env={}).agents))
    try:
        yield server
    finally:
        await server.channel.close()
        await server.server.stop(0)


async def stream(running: Running, case: str) -> list[cpb.Chunk]:
    chunks: list[cpb.Chunk] = []
    async for response in running.agents.Stream(apb.StreamRequest(agent_id="flaky", text=f"case {case}"), timeout=30):
        chunks.extend(response.chunks)
    return chunks


async def test_twenty_concurrent_runs_against_a_failing_provider_all_end_as_scripted(
    running: Running, provider: ScriptedOpenAI
) -> None:
    kinds = list(SCRIPTS)
    cases = [f"{kinds[i % len(kinds)]}-{i}" for i in range(RUNS)]
    results = await asyncio.wait_for(asyncio.gather(*(stream(running, case) for case in cases)), 45)

    for case, chunks in zip(cases, results, strict=True):
        expected_model = SCRIPTS[case.rsplit("-", 1)[0]][1]
        ends = [c for c in chunks if kind(c) in ("finish", "error", "abort")]
        assert len(ends) == 1 and ends[0] is chunks[-1], (case, [kind(c) for c in chunks])
        end = ends[0]
        if expected_model:
            assert kind(end) == "finish", (case, end)
            steps = [c.step_finish for c in chunks if kind(c) == "step_finish"]
            assert [s.model for s in steps] == [f"openai/{expected_model}"], (case, steps)
            # A cut stream's text block is left open (no text_end) and the retry's is a new one:
            # the answer is the last block.
            last_block = max(i for i, c in enumerate(chunks) if kind(c) == "text_start")
            text = "".join(c.text_delta.text for c in chunks[last_block:] if kind(c) == "text_delta")
            assert text == f"answer {case} from {expected_model}", (case, text)
            blocks = [c for c in chunks if kind(c) == "text_start"]
            calls = sum(n for (c, _), n in provider.attempts.items() if c == case)
            assert len(blocks) == (calls if case.startswith("cut") else 1), (case, len(blocks))
        else:
            assert kind(end) == "error" and end.error.reason == "MODEL_ERROR", (case, end)
            assert end.error.status_code == 429 and end.error.retryable, (case, end)

    # The retries and the fallbacks, as the fake saw them: two retries (three calls) per
    # model at most, and the run's retries are shared, so a fallback after them gets one call.
    expected: Counter[tuple[str, str]] = Counter()
    for case in cases:
        expected.update(
            {
                "recovers": {(case, "gpt-main"): 3},
                "falls-back": {(case, "gpt-main"): 3, (case, "gpt-backup"): 1},
                "cut-once": {(case, "gpt-main"): 2},
                "cut-always": {(case, "gpt-main"): 3, (case, "gpt-backup"): 1},
                "all-fail": {(case, "gpt-main"): 3, (case, "gpt-backup"): 1},
            }[case.rsplit("-", 1)[0]]
        )
    assert provider.attempts == expected
    await until(lambda: not running.host.runs.active(), within=5, what="no run left active")
    assert all(r.finished.is_set() for r in provider.requests)
