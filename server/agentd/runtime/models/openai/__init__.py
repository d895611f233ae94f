"""The `openai/...` models: OpenAI Chat Completions, streamed, over the official `openai` SDK.

The Chat Completions API is used (not Responses) because every OpenAI-compatible
server speaks it: set OPENAI_BASE_URL to point the adapter at one.

Configuration (read by `create`): OPENAI_API_KEY (required: FAILED_PRECONDITION
CREDENTIALS_MISSING when unset; any placeholder will do for a local server that
needs none), OPENAI_BASE_URL (optional), OPENAI_ORG_ID and OPENAI_PROJECT_ID
(optional). The SDK's own retries are off (`max_retries=0`): retrying is the
error processors' job.

`request` maps agentd's request to the provider's (messages, files, tools,
structured output, settings, provider options), `events` maps the stream
back, `errors` maps every failure to a ModelAPIError, and `adapter` ties them
to the SDK client.

Cancellation: cancelling the consuming task closes the SDK stream and the
client, which closes the HTTP request. A client is made per call (the model
interface has no close hook to end a shared one).

Importing this package imports the SDK: the router imports it only when an
`openai/` model is used.
"""

from agentd.runtime.models.openai.adapter import OpenAIModel, create

__all__ = ["OpenAIModel", "create"]
