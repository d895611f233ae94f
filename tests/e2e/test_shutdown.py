"""SIGTERM during open streams: health first, short runs finish, long runs end
with the SERVER_SHUTDOWN abort chunk and status OK, and the process exits 0."""

from __future__ import annotations

import asyncio
import subprocess

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb

from .serverproc import start_server

GRACE = 2.0


def slow_request(words: int, delay_ms: int) -> apb.StreamRequest:
    options = opb.ExecutionOptions()
    options.provider_options.update({"local": {"delayMs": delay_ms}})
    return apb.StreamRequest(agent_id="echo", text=" ".join(["w"] * words), options=options)


async def test_sigterm_drains_then_aborts_then_exits_zero() -> None:
    server = start_server(extra_args=["--grace", str(GRACE)])
    try:
        server.wait_serving(timeout=30)
        events: list[str] = []
        async with grpc.aio.insecure_channel(server.addr) as channel:
            agents = apb_stub(channel)
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""))
            first = await watch.read()
            assert first.status == health_pb2.HealthCheckResponse.SERVING

            short = agents.Stream(slow_request(words=10, delay_ms=100))  # ~1 s: fits the grace period
            long = agents.Stream(slow_request(words=300, delay_ms=100))  # ~30 s: does not
            short_first = await short.read()
            long_first = await long.read()

            async def watch_health() -> None:
                while (reply := await watch.read()) is not grpc.aio.EOF:
                    if reply.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                        events.append("not-serving")
                        return

            async def drain(call: grpc.aio.UnaryStreamCall, first: apb.StreamResponse, name: str) -> list:  # type: ignore[type-arg]
                chunks = list(first.chunks)
                while (message := await call.read()) is not grpc.aio.EOF:
                    chunks.extend(message.chunks)
                events.append(f"{name}-ended")
                assert await call.code() == grpc.StatusCode.OK
                return chunks

            watcher = asyncio.create_task(watch_health())
            short_task = asyncio.create_task(drain(short, short_first, "short"))
            long_task = asyncio.create_task(drain(long, long_first, "long"))
            server.proc.terminate()
            await asyncio.wait_for(watcher, 5)

            # New runs are refused while the server drains.
            try:
                await agents.Generate(apb.GenerateRequest(agent_id="echo", text="late"), timeout=5)
                refused = None
            except grpc.aio.AioRpcError as err:
                refused = err.code()
            assert refused == grpc.StatusCode.UNAVAILABLE

            short_chunks = await asyncio.wait_for(short_task, GRACE + 10)
            long_chunks = await asyncio.wait_for(long_task, GRACE + 10)

        assert events[0] == "not-serving", events
        assert short_chunks[-1].HasField("finish")
        assert long_chunks[-1].HasField("abort")
        assert long_chunks[-1].abort.reason == "SERVER_SHUTDOWN"
        assert [c.seq for c in long_chunks] == list(range(1, len(long_chunks) + 1))
        # The long run got its grace period: it was still streaming when the short one finished.
        assert events.index("short-ended") < events.index("long-ended"), events
        code = server.proc.wait(timeout=GRACE + 10)
        assert code == 0, server.log_tail()
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
            try:
                server.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


def apb_stub(channel: grpc.aio.Channel):  # type: ignore[no-untyped-def]
    from agentd_proto.v1 import agent_service_pb2_grpc

    return agent_service_pb2_grpc.AgentServiceStub(channel)
