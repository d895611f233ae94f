"""The `anthropic/<model>` models: the Messages API, streamed, over the official `anthropic` SDK.

Credentials: `ANTHROPIC_API_KEY` (required: without it `create` raises
FAILED_PRECONDITION / CREDENTIALS_MISSING naming the variable);
`ANTHROPIC_BASE_URL` is honoured. The SDK's own retries are off
(`max_retries=0`): retrying is the error processors' job.

`request` maps agentd's request to the provider's (messages, files, tools,
structured output as a forced tool, settings, provider options), `events`
maps the stream back, `errors` maps every failure to one ModelAPIError, and
`adapter` ties them to the SDK clients.

Importing this package imports the SDK: the router imports it only when an
`anthropic/` model is used.
"""

from agentd.runtime.models.anthropic.adapter import AnthropicModel, close_clients, create

__all__ = ["AnthropicModel", "close_clients", "create"]
