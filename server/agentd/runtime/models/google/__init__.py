"""The `google/<model>` models: the Gemini API over the official `google-genai` SDK.

Credentials and endpoint
    The API key is GOOGLE_API_KEY, else GOOGLE_GENERATIVE_AI_API_KEY; with
    neither set, `create` fails with FAILED_PRECONDITION / CREDENTIALS_MISSING
    naming both. GOOGLE_GEMINI_BASE_URL replaces the endpoint
    (https://generativelanguage.googleapis.com/) for a proxy or a test server:
    give the root without the API version, which the adapter appends
    (`{base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).

Retries
    The SDK's own retries are off: HTTP retry options at one attempt (which
    also stops its implicit reconnect-and-resend), automatic stream
    continuation off, automatic function calling off. Retrying is the error
    processors' job (StreamErrorRetryProcessor), driven by `retryable`.

Modules
    `request` maps agentd's request to the SDK's contents and config
    (messages, files, tools, structured output, settings, provider options),
    `events` maps the response chunks back, `errors` maps every failure to a
    ModelAPIError, and `adapter` ties them to the shared SDK clients.

Importing this package imports the SDK: the router imports it only when a
`google/` model is used.
"""

from agentd.runtime.models.google.adapter import GoogleModel, aclose_clients, create

__all__ = ["GoogleModel", "aclose_clients", "create"]
