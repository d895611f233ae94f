"""TokenCostControl across replicas: two real `agentd serve` processes share one
real redis-server, so a resource's budget is one budget whichever process
serves a run. The agent comes from agentd.toml: the `token-cost-control`
processor (bound by the host to the server's caches and its `[pricing]` table)
in both lanes, on `local/echo` with a scripted usage of 500 tokens per run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from redis.asyncio import Redis

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import usage_pb2 as upb

from .serverproc import ServerProcess, start_server

MAX_TOKENS = 2000
TOKENS_PER_RUN = 500  # 300 input + 200 output
MICRO_USD_PER_RUN = 300 * 1 + 200 * 2  # [pricing."local/echo"] input = 1.0, output = 2.0 (USD per million)

BUDGET = (
    '{ name = "token-cost-control", '
    f'options = {{ backend = "redis", maxTokens = {MAX_TOKENS}, scope = "resource" }} }}'
)
AGENT = f"""
[pricing."local/echo"]
input = 1.0
output = 2.0

[[agents]]
id = "budgeted"
model = "local/echo"
default_options = {{ provider_options = {{ local = {{ script = [
  {{ text = "ok", usage = {{ inputTokens = 300, outputTokens = 200 }} }},
] }} }} }}
input_processors = [{BUDGET}]
output_processors = [{BUDGET}]
"""


def config(tmp_path: Path, redis_url: str, prefix: str) -> Path:
    """The shared cache on Redis; each process keeps its threads in its own SQLite file."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "agentd.toml"
    path.write_text(
        f'[cache]\nbackend = "redis"\nredis_url = "{redis_url}"\nkey_prefix = "{prefix}"\n\n'
        f'[storage]\npath = "{tmp_path / "agentd.db"}"\n' + AGENT
    )
    return path


def serving(cfg: Path, log_dir: Path) -> ServerProcess:
    server = start_server(config=cfg, log_dir=log_dir)
    server.wait_serving(timeout=30)
    return server


def for_resource(resource: str) -> opb.ExecutionOptions:
    return opb.ExecutionOptions(memory=opb.MemoryOptions(resource=resource))


async def generate(channel: grpc.aio.Channel, resource: str) -> apb.GenerateResponse:
    stub = agent_service_pb2_grpc.AgentServiceStub(channel)
    reply: apb.GenerateResponse = await stub.Generate(
        apb.GenerateRequest(agent_id="budgeted", text="hello", options=for_resource(resource)), timeout=30
    )
    return reply


async def spend_until_tripped(
    channels: dict[str, grpc.aio.Channel], order: list[str], resource: str
) -> tuple[str, apb.GenerateResponse, dict[str, int]]:
    """Alternates Generate calls between the processes until one trips; returns
    the tripping process, its reply and the tokens each process counted before."""
    served = dict.fromkeys(channels, 0)
    for attempt in range(2 * MAX_TOKENS // TOKENS_PER_RUN):
        name = order[attempt % len(order)]
        reply = await generate(channels[name], resource)
        if reply.HasField("tripwire"):
            return name, reply, served
        assert reply.text == "ok"
        assert reply.total_usage.total_tokens == TOKENS_PER_RUN
        served[name] += reply.total_usage.total_tokens
    raise AssertionError(f"no run tripped for {resource}: {served}")


async def test_the_run_that_reaches_the_limit_trips_whichever_process_serves_it(
    tmp_path: Path, redis_server: Any
) -> None:
    prefix = f"agentd-e2e-cost:{tmp_path.name}:"
    a = serving(config(tmp_path / "a", redis_server.url, prefix), tmp_path / "a")
    try:
        b = serving(config(tmp_path / "b", redis_server.url, prefix), tmp_path / "b")
    except BaseException:
        a.stop()
        raise
    redis = Redis.from_url(redis_server.url)
    try:
        async with grpc.aio.insecure_channel(a.addr) as ca, grpc.aio.insecure_channel(b.addr) as cb:
            channels = {"a": ca, "b": cb}
            tripped_on = []
            for resource, order in (("u1", ["a", "b"]), ("u2", ["b", "a"])):
                name, reply, served = await spend_until_tripped(channels, order, resource)
                tripped_on.append(name)

                # Both processes served runs; the budget is their sum, not either's own share.
                assert served["a"] > 0 and served["b"] > 0
                assert served["a"] + served["b"] == MAX_TOKENS
                assert reply.finish_reason == upb.FINISH_REASON_OTHER and reply.text == ""
                trip = reply.tripwire
                assert trip.processor_id == "token-cost-control"
                assert trip.reason == f"Token cost control: token limit reached ({MAX_TOKENS}/{MAX_TOKENS})"
                meta = MessageToDict(trip.metadata)
                assert meta["usage"]["tokens"] == served["a"] + served["b"]
                runs = MAX_TOKENS // TOKENS_PER_RUN
                assert round(meta["usage"]["cost"] * 1_000_000) == runs * MICRO_USD_PER_RUN
                assert (meta["scope"], meta["scopeKey"], meta["limit"]) == (
                    "resource",
                    resource,
                    {"tokens": MAX_TOKENS},
                )

                # The counter lives once, in the shared Redis; both processes now refuse the resource.
                assert int(await redis.get(f"{prefix}agentd:cost:resource:{resource}:all:tokens")) == MAX_TOKENS
                for channel in (ca, cb):
                    assert (await generate(channel, resource)).HasField("tripwire")

            assert sorted(tripped_on) == ["a", "b"]  # one scenario tripped on each process
            fresh = await generate(cb, "u3")
            assert not fresh.HasField("tripwire") and fresh.text == "ok"
    finally:
        await redis.aclose()
        assert a.stop() == 0
        assert b.stop() == 0
