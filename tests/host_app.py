"""`agentd serve --app tests.host_app`: agents built in `setup(host)` on the
host's own backends: one keeps its memory in the host's storage, one caches
its responses in the host's cache."""

from __future__ import annotations

from agentd.runtime import Agent, Host, Memory, ResponseCache


def setup(host: Host) -> list[Agent]:
    return [
        Agent(id="app-memory", model="local/echo", memory=Memory(host.storage, last_messages=10)),
        Agent(id="app-cached", model="local/echo", input_processors=[ResponseCache(host.cache, agent_id="app-cached")]),
    ]
