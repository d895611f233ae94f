"""PrefillErrorHandler: recovers from "assistant message prefill" rejections.

Some models refuse a request whose conversation ends with an assistant message
("... does not support assistant message prefill ..."). On the first attempt
only (`retry_count == 0`), this default error processor appends a persisted user
message holding `<system-reminder>continue</system-reminder>` and asks for a
retry, so the conversation ends with a user turn.
"""

from __future__ import annotations

import re

from agentd.runtime.messages import Message, TextPart
from agentd.runtime.processors.base import APIErrorResult, ProcessAPIErrorArgs, Processor
from agentd.runtime.processors.builtins.error_chain import chain_texts

PREFILL_ERROR_HANDLER_ID = "prefill-error-handler"
PREFILL_ERROR_PATTERN = re.compile(r"does not support assistant message prefill", re.IGNORECASE)
PREFILL_RETRY_TEXT = "<system-reminder>continue</system-reminder>"
PREFILL_REMINDER_TYPE = "anthropic-prefill-processor-retry"


def is_prefill_error(error: BaseException) -> bool:
    return any(PREFILL_ERROR_PATTERN.search(text) for text in chain_texts(error))


def prefill_retry_message(like: list[Message] | None = None) -> Message:
    """The user message appended before the retry (thread/resource copied from
    the last message of `like` that has them)."""
    message = Message(
        role="user",
        parts=[TextPart(PREFILL_RETRY_TEXT)],
        metadata={"systemReminder": {"type": PREFILL_REMINDER_TYPE}},
    )
    for other in reversed(like or []):
        if other.thread_id or other.resource_id:
            message.thread_id, message.resource_id = other.thread_id, other.resource_id
            break
    return message


class PrefillErrorHandler(Processor):
    """Appends a "continue" reminder and retries once after a prefill rejection."""

    id = PREFILL_ERROR_HANDLER_ID
    name = "Prefill Error Handler"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        if args.retry_count != 0 or not is_prefill_error(args.error):
            return None
        args.message_list.add(prefill_retry_message(args.message_list.get_all()), "input")
        return APIErrorResult(retry=True)
