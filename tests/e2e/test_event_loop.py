"""`agentd serve --loop uvloop` (the optional extra) serves a run over gRPC as
the default asyncio loop does, streams included."""

from __future__ import annotations

import grpc
import pytest

from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import agent_service_pb2_grpc

from .serverproc import start_server


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_serve_on_either_event_loop(loop: str) -> None:
    server = start_server(extra_args=["--loop", loop])
    try:
        server.wait_serving(timeout=60)
        with grpc.insecure_channel(server.addr) as channel:
            stub = agent_service_pb2_grpc.AgentServiceStub(channel)
            assert stub.Generate(apb.GenerateRequest(agent_id="echo", text="one two three"), timeout=30).text == (
                "one two three"
            )
            deltas = [
                chunk.text_delta.text
                for message in stub.Stream(apb.StreamRequest(agent_id="echo", text="a b c d"), timeout=30)
                for chunk in message.chunks
                if chunk.WhichOneof("payload") == "text_delta"
            ]
            assert "".join(deltas) == "a b c d"
    finally:
        assert server.stop() == 0
