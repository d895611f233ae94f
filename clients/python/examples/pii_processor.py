"""A PII redactor as a remote processor: e-mail addresses and phone numbers in
the input and the streamed text become placeholders.

    .venv/bin/python clients/python/examples/pii_processor.py --addr 127.0.0.1:50071

and in agentd.toml:

    output_processors = [{ name = "remote", options = { id = "pii-py", target = "127.0.0.1:50071" } }]
"""

from __future__ import annotations

import argparse
import asyncio
import re

from agentd_client.processor import Processor, Run, serve_processor

from agentd_proto.v1 import chunk_pb2, message_pb2, processor_service_pb2

PII = [(re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+"), "[email]"), (re.compile(r"\+?\d[\d -]{7,}\d"), "[phone]")]


def redact(text: str) -> str:
    for pattern, label in PII:
        text = pattern.sub(label, text)
    return text


class Redactor(Processor):
    name = "pii-py"

    def process_input(self, run: Run, call: processor_service_pb2.ProcessInputCall) -> list[message_pb2.Message]:
        for message in call.messages:
            for part in message.parts:
                if part.HasField("text"):
                    part.text.text = redact(part.text.text)
        return list(call.messages)

    def process_output_stream(self, run: Run, part: chunk_pb2.Chunk) -> chunk_pb2.Chunk:
        if part.HasField("text_delta"):
            part.text_delta.text = redact(part.text_delta.text)
        return part


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--addr", default="127.0.0.1:50071")
    server = await serve_processor(Redactor(), parser.parse_args().addr)
    print(f"pii-py listening on port {server.bound_port}", flush=True)  # type: ignore[attr-defined]
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
