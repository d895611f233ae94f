"""Generate and Stream on the echo agent with the raw generated stubs (agentd-proto).

.venv/bin/python examples/python/stream.py [--addr 127.0.0.1:50051]
"""

import argparse
import asyncio

import grpc

from agentd_proto.v1 import agent_service_pb2 as pb
from agentd_proto.v1 import agent_service_pb2_grpc as rpc


async def main(addr: str) -> None:
    async with grpc.aio.insecure_channel(addr) as channel:
        agents = rpc.AgentServiceStub(channel)
        reply = await agents.Generate(pb.GenerateRequest(agent_id="echo", text="hi"))
        print(reply.text, reply.usage.output_tokens)
        async for message in agents.Stream(pb.StreamRequest(agent_id="echo", text="one two three")):
            for chunk in message.chunks:
                if chunk.HasField("text_delta"):
                    print(chunk.text_delta.text, end="", flush=True)
        print()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Generate and Stream on the echo agent")
    parser.add_argument("--addr", default="127.0.0.1:50051", help="agentd's host:port")
    asyncio.run(main(parser.parse_args().addr))
