"""`agentd serve --app tests.prompt_app`: a server with the `prompt/...` test
model (its reply is the run's system prompt and tools: tests/support_models.py)."""

from __future__ import annotations

from tests.support_models import PROMPT, prompt_model

from agentd.runtime import register_provider

register_provider(PROMPT, prompt_model)
