"""A bare grpc.aio server, the baseline the benchmarks set agentd beside, so
they can tell what grpc itself costs from what agentd adds:

- ThreadService.Subscribe answered with one snapshot and then nothing
  (bench/load.py: what grpc holds per open stream);
- bench.Bare/Stream: the request is a count, answered with that many
  one-chunk StreamResponses (bench/stream.py, bench/peers.py);
- bench.Bare/Generate: answers with the request's own bytes, so a caller sends
  the reply it wants, serialised once (bench/cache.py, bench/peers.py);
- AgentService.Generate: decodes the GenerateRequest and answers a reply of
  the echo agent's shape (one step, one message, usage twice), serialised
  once (bench/load.py: the floor ghz sees under its own command).

    python bench/bare_server.py PORT '[["grpc.option", value], ...]' [auto|uvloop|asyncio]

The last argument is the event loop, chosen as `agentd serve --loop` chooses
it (auto: uvloop where it is installed), so the floor runs on agentd's loop.
Its threads are scheduled as `agentd serve` schedules its own: every one but
the event loop's SCHED_BATCH once it serves (agentd.helper_threads), unless
$AGENTD_SERVER__BATCH_HELPER_THREADS is false, as for agentd.

With $AGENTD_BENCH_TRACEMALLOC_DIR set, tracemalloc runs and each SIGUSR1
dumps a snapshot there (bench/memprofile.py). Imports nothing of agentd's
but agentd.helper_threads (the standard library's alone), so it starts in a
moment.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import AsyncIterator

import grpc

from agentd.helper_threads import batch_helpers
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import thread_service_pb2 as tpb
from agentd_proto.v1 import usage_pb2 as upb

BARE_STREAM = "/bench.Bare/Stream"
BARE_GENERATE = "/bench.Bare/Generate"
#: What each chunk of bench.Bare/Stream carries.
BARE_DELTA = "w "


async def subscribe(request: tpb.SubscribeRequest, context: object) -> AsyncIterator[tpb.SubscribeResponse]:
    yield tpb.SubscribeResponse(snapshot=tpb.ThreadSnapshot())
    await asyncio.Event().wait()


async def stream(request: bytes, context: object) -> AsyncIterator[bytes]:
    for seq in range(1, int(request.decode()) + 1):
        chunk = cpb.Chunk(run_id="bare", seq=seq, text_delta=cpb.TextDeltaChunk(id="t", text=BARE_DELTA))
        yield apb.StreamResponse(chunks=[chunk]).SerializeToString()


async def generate(request: bytes, context: object) -> bytes:
    return request


def _echo_reply(text: str) -> bytes:
    """What agentd's echo agent answers to a Generate of `text`, field for field."""
    usage = upb.Usage(input_tokens=2, output_tokens=2, total_tokens=4)
    reply = apb.GenerateResponse(
        run_id="00000000-0000-4000-8000-000000000000",
        text=text,
        finish_reason=upb.FINISH_REASON_STOP,
        raw_finish_reason="stop",
        usage=usage,
        total_usage=usage,
        model="local/echo",
    )
    reply.steps.add(text=text, finish_reason=upb.FINISH_REASON_STOP, usage=usage, model="local/echo")
    message = reply.response_messages.add(id="msg_00000000000000000000000000000000", role=mpb.ROLE_ASSISTANT)
    message.parts.add().text.text = text
    message.create_time.GetCurrentTime()
    return reply.SerializeToString()


ECHO_REPLY = _echo_reply("hello load")


#: $AGENTD_BENCH_BARE_SPIN_US: microseconds AgentService.Generate busy-waits
#: first, standing for a handler's own work on the event loop (bench/load.py
#: --floor-spin-us: what each microsecond there costs under load).
SPIN_SECONDS = float(os.environ.get("AGENTD_BENCH_BARE_SPIN_US", "0")) / 1e6


async def agent_generate(request: apb.GenerateRequest, context: object) -> bytes:
    if SPIN_SECONDS:
        until = time.perf_counter() + SPIN_SECONDS
        while time.perf_counter() < until:
            pass
    return ECHO_REPLY


def handlers() -> tuple[grpc.GenericRpcHandler, ...]:
    subscribe_handler = grpc.unary_stream_rpc_method_handler(
        subscribe,
        request_deserializer=tpb.SubscribeRequest.FromString,
        response_serializer=tpb.SubscribeResponse.SerializeToString,
    )
    bare = {
        "Stream": grpc.unary_stream_rpc_method_handler(stream),
        "Generate": grpc.unary_unary_rpc_method_handler(generate),
    }
    agent_generate_handler = grpc.unary_unary_rpc_method_handler(
        agent_generate, request_deserializer=apb.GenerateRequest.FromString
    )
    return (
        grpc.method_handlers_generic_handler("agentd.v1.ThreadService", {"Subscribe": subscribe_handler}),
        grpc.method_handlers_generic_handler("agentd.v1.AgentService", {"Generate": agent_generate_handler}),
        grpc.method_handlers_generic_handler("bench.Bare", bare),
    )


async def serve(port: int, options: list[tuple[str, int | str]]) -> None:
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers(handlers())
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    if os.environ.get("AGENTD_SERVER__BATCH_HELPER_THREADS", "true").lower() not in ("false", "0", "no", "off"):
        batch_helpers()
    await server.wait_for_termination()


def main() -> None:
    if "AGENTD_BENCH_TRACEMALLOC_DIR" in os.environ:
        import memprofile  # noqa: F401  (its import starts tracemalloc, before anything is allocated)
    port, options = int(sys.argv[1]), [tuple(o) for o in json.loads(sys.argv[2])]
    loop = sys.argv[3] if len(sys.argv) > 3 else "auto"
    if loop == "uvloop" or (loop == "auto" and importlib.util.find_spec("uvloop") is not None):
        uvloop = importlib.import_module("uvloop")
        uvloop.run(serve(port, options))
    else:
        asyncio.run(serve(port, options))


if __name__ == "__main__":
    main()
