#!/usr/bin/env python3
"""Runs the client conformance scenarios (scenarios.json) with the Python client.

    python tests/conformance/run_python.py --addr HOST:PORT [--scenarios tests/conformance/scenarios.json]
        [--token TOKEN] [--cacert ca.pem [--cert client.pem --key client-key.pem]]

against a server started with

    agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app --port PORT

A server with `[auth]` takes the token (`--token`, or `$AGENTD_TOKEN`; the
scenarios need the writer and admin roles); `--cacert` connects over TLS
trusting that CA, `--cert`/`--key` add a client certificate (mutual TLS).

Prints one line per scenario, then exactly `conformance: N passed, M failed`
(N + M is the number of scenarios) and exits 0 only when M is 0. A step of an
unknown kind, or an `expect` key the step kind does not define, fails its
scenario. The step kinds are defined in tests/conformance/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]

if importlib.util.find_spec("agentd_client") is None:  # not installed: use the checkout's copy
    sys.path.insert(0, str(REPO_ROOT / "clients" / "python"))

from agentd_client import (  # noqa: E402
    TLS,
    AgentdClient,
    AgentdError,
    CacheStats,
    Subscription,
    chunk_kind,
    finish_reason_name,
    first_text,
    from_value,
)

from agentd_proto.v1 import chunk_pb2  # noqa: E402

DEFAULT_SCENARIOS = HERE / "scenarios.json"
SCENARIO_TIMEOUT_S = 90.0
READ_TIMEOUT_S = 30.0
#: How long a resumed subscription is watched for chunks beyond the expected ones.
EXTRA_CHUNK_WINDOW_S = 0.5


class StepFailed(Exception):
    """A step's outcome differs from its expectation."""


@dataclass
class SubscriptionState:
    sub: Subscription
    thread: str
    resource: str
    #: Every chunk this subscription read, in order (what `resume` indexes).
    chunks: list[chunk_pb2.Chunk] = field(default_factory=list)


@dataclass
class Context:
    client: AgentdClient
    subscriptions: dict[str, SubscriptionState] = field(default_factory=dict)
    stats: dict[str, CacheStats] = field(default_factory=dict)

    async def close(self) -> None:
        for state in self.subscriptions.values():
            await state.sub.aclose()


# ------------------------------------------------------------------ helpers


def substitute(value: Any, ids: dict[str, str]) -> Any:
    """`$thread` / `$resource` replaced by this scenario's fresh ids, in every string."""
    if isinstance(value, str):
        for name, fresh in ids.items():
            value = value.replace(f"${name}", fresh)
        return value
    if isinstance(value, list):
        return [substitute(v, ids) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, ids) for k, v in value.items()}
    return value


class Expect:
    """The step's `expect`, checked key by key; unknown keys fail the step."""

    def __init__(self, step: dict[str, Any], known: set[str]) -> None:
        self.values: dict[str, Any] = dict(step.get("expect") or {})
        unknown = set(self.values) - known
        if unknown:
            raise StepFailed(f"{step['kind']}: unknown expect key(s) {sorted(unknown)}")

    def __contains__(self, key: str) -> bool:
        return key in self.values

    def get(self, key: str) -> Any:
        return self.values[key]

    def equal(self, key: str, actual: Any) -> None:
        if key in self.values and actual != self.values[key]:
            raise StepFailed(f"{key}: expected {self.values[key]!r}, got {actual!r}")


def kinds_of(chunks: list[chunk_pb2.Chunk]) -> list[str]:
    return [chunk_kind(c) for c in chunks]


def seq_contiguous(chunks: list[chunk_pb2.Chunk]) -> bool:
    """Per run, `seq` is 1, 2, 3, ... with no gap."""
    by_run: dict[str, list[int]] = {}
    for chunk in chunks:
        by_run.setdefault(chunk.run_id, []).append(chunk.seq)
    return bool(by_run) and all(seqs == list(range(1, len(seqs) + 1)) for seqs in by_run.values())


def deltas(chunks: list[chunk_pb2.Chunk]) -> str:
    return "".join(c.text_delta.text for c in chunks if c.HasField("text_delta"))


async def read_until_terminal(source: Any, into: list[chunk_pb2.Chunk]) -> chunk_pb2.Chunk:
    """Read chunks from an async iterator into `into` until a top-level run ends."""

    async def read() -> chunk_pb2.Chunk:
        async for chunk in source:
            into.append(chunk)
            if not chunk.parent_run_id and chunk_kind(chunk) in ("finish", "error", "abort"):
                return chunk
        raise StepFailed("the stream ended before the run did")

    try:
        return await asyncio.wait_for(read(), READ_TIMEOUT_S)
    except TimeoutError:
        raise StepFailed(f"no end of the run within {READ_TIMEOUT_S:.0f}s ({len(into)} chunks read)") from None


# -------------------------------------------------------------------- steps


async def step_generate(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"text", "finish_reason", "usage_input_tokens_at_least", "error_code", "error_reason"})
    options: dict[str, Any] = {}
    if step.get("thread") or step.get("resource"):
        options["memory"] = (step.get("resource", ""), step.get("thread", ""))
    wants_error = "error_code" in expect or "error_reason" in expect
    try:
        result = await ctx.client.generate(step["agent"], step["text"], **options)
    except AgentdError as err:
        if not wants_error:
            raise StepFailed(f"generate failed: {err}") from None
        expect.equal("error_code", err.code_name)
        expect.equal("error_reason", err.reason)
        return
    if wants_error:
        raise StepFailed(f"expected an error, got a result (text {result.text!r})")
    expect.equal("text", result.text)
    expect.equal("finish_reason", result.finish_reason)
    if "usage_input_tokens_at_least" in expect:
        usage = result.usage if result.usage.HasField("input_tokens") else result.total_usage
        least = expect.get("usage_input_tokens_at_least")
        if not usage.HasField("input_tokens") or usage.input_tokens < least:
            got = usage.input_tokens if usage.HasField("input_tokens") else "none"
            raise StepFailed(f"usage.input_tokens: expected at least {least}, got {got}")


async def step_stream(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(
        step, {"kinds", "seq_contiguous", "text", "last_kinds", "tripwire_processor", "finish_reason", "data_types"}
    )
    stream = ctx.client.stream(step["agent"], step["text"])
    chunks = await asyncio.wait_for(stream.collect(), READ_TIMEOUT_S)
    kinds = kinds_of(chunks)
    expect.equal("kinds", kinds)
    expect.equal("seq_contiguous", seq_contiguous(chunks))
    expect.equal("text", deltas(chunks))
    if "last_kinds" in expect:
        expect.equal("last_kinds", kinds[-len(expect.get("last_kinds")) :])
    if "tripwire_processor" in expect:
        trips = [c.tripwire.tripwire.processor_id for c in chunks if c.HasField("tripwire")]
        expect.equal("tripwire_processor", trips[0] if trips else None)
    if "finish_reason" in expect:
        finishes = [finish_reason_name(c.finish.finish_reason) for c in chunks if c.HasField("finish")]
        expect.equal("finish_reason", finishes[-1] if finishes else None)
    expect.equal("data_types", [c.data.type for c in chunks if c.HasField("data")])


async def step_stream_slow_reader(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"chunks", "fewer_messages_than_chunks", "seq_contiguous"})
    text = " ".join(f"w{i}" for i in range(int(step["words"])))
    stream = ctx.client.stream(step["agent"], text)
    batches = stream.batches()
    messages, chunks = 0, []

    async def read() -> None:
        nonlocal messages
        first = True
        async for batch in batches:
            messages += 1
            chunks.extend(batch)
            if first:  # fall behind: the server keeps producing meanwhile
                first = False
                await asyncio.sleep(float(step["pause_ms"]) / 1000.0)

    await asyncio.wait_for(read(), READ_TIMEOUT_S + float(step["pause_ms"]) / 1000.0)
    expect.equal("chunks", len(chunks))
    expect.equal("fewer_messages_than_chunks", messages < len(chunks))
    expect.equal("seq_contiguous", seq_contiguous(chunks))


async def step_list_messages(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"texts"})
    messages = await ctx.client.list_messages(step["thread"], resource_id=step.get("resource", "")).all()
    expect.equal("texts", [first_text(m) for m in messages])


async def step_subscribe(ctx: Context, step: dict[str, Any]) -> None:
    Expect(step, set())
    name = step["name"]
    if name in ctx.subscriptions:
        raise StepFailed(f"subscription {name!r} exists already")
    sub = ctx.client.subscribe(step["thread"], resource_id=step["resource"])
    # open() fails unless the first message is the snapshot.
    snapshot = await asyncio.wait_for(sub.open(), READ_TIMEOUT_S)
    if snapshot.thread_id != step["thread"] or not snapshot.log_epoch:
        raise StepFailed(f"snapshot: unexpected {snapshot}")
    ctx.subscriptions[name] = SubscriptionState(sub, step["thread"], step["resource"])


async def step_send_message(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"action"})
    routing = await ctx.client.send_message(
        step["agent"], step["text"], thread_id=step["thread"], resource_id=step["resource"]
    )
    expect.equal("action", routing.action)


async def step_read_subscription(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"echo_texts", "text"})
    state = ctx.subscriptions.get(step["name"])
    if state is None:
        raise StepFailed(f"no subscription {step['name']!r}")
    until = step.get("until", "finish")
    if until != "finish":
        raise StepFailed(f"read_subscription: unknown until {until!r}")
    read: list[chunk_pb2.Chunk] = []
    try:
        last = await read_until_terminal(state.sub, read)
    finally:
        state.chunks.extend(read)
    if chunk_kind(last) != "finish":
        raise StepFailed(f"the run ended with {chunk_kind(last)}, not finish: {last}")
    expect.equal("echo_texts", [c.signal.signal.text for c in read if c.HasField("signal")])
    expect.equal("text", deltas(read))


async def step_resume(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"replays_rest_without_gap"})
    state = ctx.subscriptions.get(step["name"])
    if state is None:
        raise StepFailed(f"no subscription {step['name']!r}")
    index = int(step["after_chunk_index"])
    if not 0 <= index < len(state.chunks):
        raise StepFailed(f"after_chunk_index {index} out of range: the subscription read {len(state.chunks)} chunks")
    position = state.sub.position
    if position is None:
        raise StepFailed("the subscription has no log epoch")
    wanted = [(c.offset, c.run_id, c.seq) for c in state.chunks[index + 1 :]]
    resumed = ctx.client.subscribe(
        state.thread, resource_id=state.resource, after=(position[0], state.chunks[index].offset), reconnect=False
    )
    got: list[tuple[int, str, int]] = []
    try:
        await asyncio.wait_for(resumed.open(), READ_TIMEOUT_S)

        async def read(count: int) -> None:
            while len(got) < count:
                chunk = await resumed.__anext__()
                got.append((chunk.offset, chunk.run_id, chunk.seq))

        try:
            await asyncio.wait_for(read(len(wanted)), READ_TIMEOUT_S)
        except TimeoutError:
            pass
        if len(got) == len(wanted):  # nothing beyond the expected chunks
            try:
                await asyncio.wait_for(read(len(wanted) + 1), EXTRA_CHUNK_WINDOW_S)
            except (TimeoutError, StopAsyncIteration):
                pass
    except StopAsyncIteration:
        pass
    finally:
        await resumed.aclose()
    ok = got == wanted
    if "replays_rest_without_gap" in expect and ok != expect.get("replays_rest_without_gap"):
        raise StepFailed(
            f"replays_rest_without_gap: expected {expect.get('replays_rest_without_gap')}, got {ok} "
            f"(resumed after offset {state.chunks[index].offset}: the later chunks have offsets "
            f"{[w[0] for w in wanted]}, the resumed subscription sent {[g[0] for g in got]})"
        )


async def step_cache_stats(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"hits_increased_since"})
    stats = await ctx.client.get_cache_stats()
    if "hits_increased_since" in expect:
        since = expect.get("hits_increased_since")
        if since not in ctx.stats:
            raise StepFailed(f"no remembered cache stats {since!r}")
        if stats.hits <= ctx.stats[since].hits:
            raise StepFailed(f"cache hits did not increase: {ctx.stats[since].hits} then {stats.hits}")
    if step.get("name"):
        ctx.stats[step["name"]] = stats


async def step_list_scores(ctx: Context, step: dict[str, Any]) -> None:
    """A thread's scorers, polled for up to five seconds (scoring runs after the run has answered)."""
    expect = Expect(step, {"scorers"})
    deadline = time.monotonic() + 5
    while True:
        names = sorted([s.scorer async for s in ctx.client.list_scores(thread_id=step["thread"])])
        if "scorers" not in expect or names == expect.get("scorers") or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    expect.equal("scorers", names)


async def step_connect_client_tool(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"tool_result", "text"})
    tool, answer = step["tool"], step["answer"]
    asked: list[Any] = []

    async def handler(args: Any) -> Any:
        asked.append(args)
        return answer

    async with ctx.client.connect(step["agent"], step["thread"], step["resource"], tools={tool: handler}) as session:
        routing = await session.send_message(step["text"])
        if routing.action != "wake":
            raise StepFailed(f"send_message over Connect: expected a wake, got {routing.action!r}")
        chunks = await asyncio.wait_for(session.read_run(routing.run_id), READ_TIMEOUT_S)
    run = [c for c in chunks if c.run_id == routing.run_id]
    if chunk_kind(run[-1]) != "finish":
        raise StepFailed(f"the run ended with {chunk_kind(run[-1])}: {run[-1]}")
    if not asked:
        raise StepFailed(f"the client tool {tool!r} was never called")
    results = [from_value(c.tool_result.result) for c in run if c.HasField("tool_result")]
    if "tool_result" in expect:
        expect.equal("tool_result", results[0] if results else None)
    expect.equal("text", deltas(run))


async def step_update_overrides(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"overridden_fields", "error_code", "error_reason"})
    try:
        written = await ctx.client.update_agent_overrides(step["agent"], instructions=step["instructions"])
    except AgentdError as err:
        if "error_code" not in expect and "error_reason" not in expect:
            raise StepFailed(f"update_overrides failed: {err}") from None
        expect.equal("error_code", err.code_name)
        expect.equal("error_reason", err.reason)
        return
    if "error_code" in expect or "error_reason" in expect:
        raise StepFailed("expected an error, the update succeeded")
    expect.equal("overridden_fields", list(written.overridden_fields))


async def step_delete_overrides(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"overridden_fields"})
    deleted = await ctx.client.delete_agent_overrides(step["agent"])
    expect.equal("overridden_fields", list(deleted.overridden_fields))


async def step_get_agent(ctx: Context, step: dict[str, Any]) -> None:
    expect = Expect(step, {"instructions", "overridden_fields"})
    agent = await ctx.client.get_agent(step["agent"])
    expect.equal("instructions", agent.instructions)
    expect.equal("overridden_fields", list(agent.overridden_fields))


STEPS: dict[str, Callable[[Context, dict[str, Any]], Awaitable[None]]] = {
    "generate": step_generate,
    "stream": step_stream,
    "stream_slow_reader": step_stream_slow_reader,
    "list_messages": step_list_messages,
    "subscribe": step_subscribe,
    "send_message": step_send_message,
    "read_subscription": step_read_subscription,
    "resume": step_resume,
    "cache_stats": step_cache_stats,
    "connect_client_tool": step_connect_client_tool,
    "list_scores": step_list_scores,
    "update_overrides": step_update_overrides,
    "delete_overrides": step_delete_overrides,
    "get_agent": step_get_agent,
}


# ------------------------------------------------------------------- runner


async def run_scenario(client: AgentdClient, scenario: dict[str, Any]) -> None:
    ids = {"thread": f"conf-thread-{uuid.uuid4().hex[:12]}", "resource": f"conf-resource-{uuid.uuid4().hex[:12]}"}
    ctx = Context(client)
    try:
        for number, raw in enumerate(scenario.get("steps", []), 1):
            step = substitute(raw, ids)
            kind = step.get("kind")
            handler = STEPS.get(kind)  # type: ignore[arg-type]
            if handler is None:
                raise StepFailed(f"step {number}: unknown step kind {kind!r}")
            try:
                await handler(ctx, step)
            except StepFailed as err:
                raise StepFailed(f"step {number} ({kind}): {err}") from None
            except AgentdError as err:
                raise StepFailed(f"step {number} ({kind}): {err}") from None
            except TimeoutError:
                raise StepFailed(f"step {number} ({kind}): timed out") from None
    finally:
        await ctx.close()


def channel_target(addr: str) -> tuple[str, list[tuple[str, Any]]]:
    """One HOST:PORT, or several separated by commas: replicas, called round robin
    (each call may land on another replica, as behind a gRPC load balancer)."""
    if "," not in addr:
        return addr, []
    config = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
    return f"ipv4:{addr}", [("grpc.service_config", config)]


async def run_all(
    addr: str, scenarios: list[dict[str, Any]], *, token: str | None = None, tls: TLS | None = None
) -> tuple[int, int]:
    passed = failed = 0
    target, options = channel_target(addr)
    async with AgentdClient(target, token=token, tls=tls, timeout=READ_TIMEOUT_S, channel_options=options) as client:
        for scenario in scenarios:
            name = scenario.get("name", "?")
            started = time.monotonic()
            try:
                await asyncio.wait_for(run_scenario(client, scenario), SCENARIO_TIMEOUT_S)
            except StepFailed as err:
                failed += 1
                print(f"FAIL {name}: {err}", flush=True)
            except TimeoutError:
                failed += 1
                print(f"FAIL {name}: timed out after {SCENARIO_TIMEOUT_S:.0f}s", flush=True)
            except Exception as err:
                failed += 1
                detail = traceback.format_exception_only(type(err), err)[-1].strip()
                print(f"FAIL {name}: {detail}", flush=True)
            else:
                passed += 1
                print(f"PASS {name} ({time.monotonic() - started:.2f}s)", flush=True)
    return passed, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="agentd client conformance, Python client")
    parser.add_argument(
        "--addr",
        required=True,
        help="HOST:PORT of a server running the conformance config (or several, comma-separated: replicas)",
    )
    parser.add_argument("--scenarios", type=Path, default=DEFAULT_SCENARIOS, help="the scenario file")
    parser.add_argument("--token", help="bearer token (default: $AGENTD_TOKEN)")
    parser.add_argument("--cacert", help="connect over TLS, trusting this CA (PEM)")
    parser.add_argument("--cert", help="client certificate (PEM) for mutual TLS; with --key")
    parser.add_argument("--key", help="the client certificate's key (PEM)")
    args = parser.parse_args(argv)
    if (args.cert is None) != (args.key is None) or (args.cert and not args.cacert):
        parser.error("--cert and --key go together, with --cacert")
    tls = TLS(ca_file=args.cacert, cert_file=args.cert, key_file=args.key) if args.cacert else None
    scenarios = json.loads(args.scenarios.read_text(encoding="utf-8"))["scenarios"]
    passed, failed = asyncio.run(run_all(args.addr, scenarios, token=args.token, tls=tls))
    print(f"conformance: {passed} passed, {failed} failed", flush=True)
    return 0 if failed == 0 and passed == len(scenarios) else 1


if __name__ == "__main__":
    sys.exit(main())
