"""A bare grpc.aio server for bench/load.py: ThreadService.Subscribe answered
with one snapshot and then nothing, so the benchmark can tell what grpc itself
holds per open stream from what agentd adds.

    python bench/bare_server.py PORT '[["grpc.option", value], ...]'

With $AGENTD_BENCH_TRACEMALLOC_DIR set, tracemalloc runs and each SIGUSR1
dumps a snapshot there (bench/memprofile.py). Imports nothing of agentd's, so
it starts in a moment.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator

import grpc

from agentd_proto.v1 import thread_service_pb2 as tpb


async def subscribe(request: tpb.SubscribeRequest, context: object) -> AsyncIterator[tpb.SubscribeResponse]:
    yield tpb.SubscribeResponse(snapshot=tpb.ThreadSnapshot())
    await asyncio.Event().wait()


async def serve(port: int, options: list[tuple[str, int | str]]) -> None:
    handler = grpc.unary_stream_rpc_method_handler(
        subscribe,
        request_deserializer=tpb.SubscribeRequest.FromString,
        response_serializer=tpb.SubscribeResponse.SerializeToString,
    )
    server = grpc.aio.server(options=options)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("agentd.v1.ThreadService", {"Subscribe": handler}),)
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


def main() -> None:
    if "AGENTD_BENCH_TRACEMALLOC_DIR" in os.environ:
        import memprofile  # noqa: F401  (its import starts tracemalloc, before anything is allocated)
    port, options = int(sys.argv[1]), [tuple(o) for o in json.loads(sys.argv[2])]
    asyncio.run(serve(port, options))


if __name__ == "__main__":
    main()
