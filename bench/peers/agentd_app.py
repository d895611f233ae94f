"""`agentd serve --app agentd_app` (from bench/peers/): the pass-through output-stream
processor of bench/peers.py, the same one mastra.mjs gives Mastra (it returns
each chunk as it came). Hosts no agents of its own: agentd.toml names them."""

from __future__ import annotations

from typing import Any

from agentd.runtime.chunks import Chunk
from agentd.runtime.processors.base import Processor, ProcessOutputStreamArgs


class PassThrough(Processor):
    def __init__(self, id: str = "pass-through") -> None:
        self.id = id

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk:
        return args.part


def pass_through(options: dict[str, Any]) -> Processor:
    return PassThrough(**options)


agents: list[object] = []
processors = {"pass-through": pass_through}
