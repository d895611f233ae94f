"""The agent loop: one run of an agent, streamed as chunks into a ChunkBuffer.

resolve processors ─► processInput
per step: processInputStep (+ prepareStep) ─► prompt ─► processLLMRequest
          ─► model (or cached replay; processAPIError on rejection)
          ─► processOutputStream per chunk ─► processLLMResponse
          ─► processOutputStep ─► tools ─► processToolResult
structured output (the object, or the structuring model's) ─► processOutputResult ─► finish

`agent_loop` runs the steps, `model_call` makes one step's model call (with
attachments, error-lane retries and fallback models), `tool_calls` runs a
step's tools, `structured` makes the run's structured-output object,
`prompt` builds what the model receives, `request_context` checks the
caller's context against the agent's schema, `state` is what the loop shares
with the run's caller, and `writer` is `writer.custom(...)`.
The caller's side of a run, `RunHandle`, is agentd.runtime.agent's.
"""
