#!/usr/bin/env python3
"""A tour of the agentd Python client against a server started with `make run`
(the repository's agentd.toml: agents echo, chat and scripted).

    .venv/bin/python clients/python/examples/chat_example.py [--addr 127.0.0.1:50051]
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from typing import Any

from agentd_client import AgentdClient, AgentdError, chunk_kind, first_text, joined_text


async def pick_color(args: Any) -> str:
    """A client tool: the model asks, this process answers."""
    choices = args.get("choices", ["blue"]) if isinstance(args, dict) else ["blue"]
    print(f"  [tool] pick_color{tuple(choices)} -> {choices[-1]!r}")
    return str(choices[-1])


async def main(addr: str) -> None:
    async with AgentdClient(addr, timeout=30) as client:
        print("agents:", ", ".join(agent.id for agent in await client.list_agents()))

        # One call, one answer.
        result = await client.generate("echo", "Hello from Python", max_steps=2)
        print(f"generate: {result.text!r} ({result.finish_reason}, {result.usage.input_tokens} input tokens)")

        # Stream the chunks; text deltas print as they arrive.
        print("stream: ", end="")
        async with client.stream("echo", "one two three four") as stream:
            async for chunk in stream:
                if chunk.HasField("text_delta"):
                    print(chunk.text_delta.text, end="", flush=True)
        print(f"  <- {stream.finish_reason}")

        # A conversation in a thread: subscribe first, then wake the thread.
        resource, thread_id = "example-user", f"example-{uuid.uuid4().hex[:8]}"
        async with client.subscribe(thread_id, resource_id=resource) as subscription:
            routing = await client.send_message("chat", "remember me", thread_id=thread_id, resource_id=resource)
            print(f"send_message: {routing.action} run {routing.run_id}")
            chunks = []
            async for chunk in subscription:
                chunks.append(chunk)
                if chunk_kind(chunk) == "finish":
                    break
            print(f"subscription: {joined_text(chunks)!r} at {subscription.position}")
        history = [first_text(m) async for m in client.list_messages(thread_id, resource_id=resource)]
        print("history:", history)

        # A live session with a client tool: the scripted model calls pick_color,
        # the session runs the handler and sends the result back.
        script = [
            {"toolCalls": [{"id": "call-1", "name": "pick_color", "args": {"choices": ["red", "blue"]}}]},
            {"text": "You picked blue."},
        ]
        async with client.connect(
            "scripted",
            f"example-tools-{uuid.uuid4().hex[:8]}",
            resource,
            tools={"pick_color": pick_color},
            provider_options={"local": {"script": script}},
        ) as session:
            routing = await session.send_message("choose a color")
            chunks = await session.read_run(routing.run_id, timeout=30)
            print(f"connect: {joined_text(chunks)!r}")

        # Errors carry the contract's reason and field violations.
        try:
            await client.generate("echo", "x", temperature=7)
        except AgentdError as err:
            print(f"error: {err.code_name} {err.reason} {err.violations}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:50051")
    asyncio.run(main(parser.parse_args().addr))
