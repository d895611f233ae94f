"""The app of the remote-processor e2e tests (`agentd serve --app tests.e2e.remote_app`):
a scripted agent with a tool, so a run reaches the tool-result hook."""

from __future__ import annotations

from agentd.runtime import Agent, Tool

agents = [Agent(id="tools", model="local/scripted", tools=[Tool("add", "Adds", lambda args: args["a"] + args["b"])])]
