"""UnsupportedFileHandler: drops files a model refused from the outbound prompt.

A default error processor with two hooks:

* `process_api_error` (first attempt only, `retry_count == 0`), looking at the
  error and up to 5 links of its cause chain:
  (a) an error naming an unsupported media type (`details["unsupported_media_type"]`,
      or a message such as "unsupported media type: application/zip", or an
      HTTP 415 naming one) → that type (lower-cased, parameters dropped) is
      remembered;
  (b) otherwise, a provider rejection of the request (a non-retryable
      `ModelAPIError` with status 400, 413, 415 or 422) while some user message
      holds a file that is not image/*, text/* or application/pdf → `*` is
      remembered.
  It asks for a retry only when the remembered types change what would be
  sent (so a repeated rejection is not retried forever).
* `process_llm_request` (every call): once anything is remembered, each file
  part of a user message whose type was rejected, or which is not image/*,
  text/* or application/pdf, is replaced in the outbound prompt by the text
  `[Attachment unavailable: <filename or media type>]`. Stored messages keep
  their files. (agentd has no per-agent sandbox to upload such files to, so the
  placeholder is always used.)

The remembered types live in the request state under `rejectedMediaTypes`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import replace
from typing import Any

from agentd.runtime.messages import FilePart, Message, TextPart
from agentd.runtime.models.base import ModelAPIError
from agentd.runtime.processors.base import (
    APIErrorResult,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessLLMRequestArgs,
    Processor,
)
from agentd.runtime.processors.builtins.error_chain import details_of, iter_error_chain, status_of, texts_of

log = logging.getLogger(__name__)

UNSUPPORTED_FILE_HANDLER_ID = "unsupported-file-handler"
REJECTED_MEDIA_TYPES_STATE_KEY = "rejectedMediaTypes"
#: Remembered when a rejection names no media type: every non-standard file.
ANY_MEDIA_TYPE = "*"
_MAX_CHAIN_DEPTH = 5
_REJECTION_STATUSES = frozenset({400, 413, 415, 422})
_DETAIL_KEYS = ("unsupported_media_type", "unsupportedMediaType")
_NAMED_TYPE = re.compile(
    r"(?:media|mime|content|file)[ _-]?type\s*:?\s*['\"`]?([a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+*-]+)",
    re.IGNORECASE,
)
_UNSUPPORTED = re.compile(r"unsupported|not supported|does not support|cannot (?:be )?process", re.IGNORECASE)


def placeholder(part: FilePart) -> str:
    return f"[Attachment unavailable: {part.filename or part.media_type}]"


def normalize_media_type(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def is_standard_media_type(media_type: str) -> bool:
    """image/*, text/* and application/pdf: what models generally accept."""
    kind = normalize_media_type(media_type)
    return kind.startswith(("image/", "text/")) or kind == "application/pdf"


def is_rejected(media_type: str, rejected: Collection[str]) -> bool:
    """True when a file of `media_type` must not be sent, given the remembered types."""
    if not rejected:
        return False
    kind = normalize_media_type(media_type)
    if not is_standard_media_type(kind):
        return True
    for entry in rejected:
        if entry == kind or (entry.endswith("/*") and kind.startswith(entry[:-1])):
            return True
    return False


def named_media_type(error: BaseException) -> str | None:
    """The unsupported media type an error (or its chain) names, if any."""
    for exc in iter_error_chain(error, max_depth=_MAX_CHAIN_DEPTH):
        details = details_of(exc)
        for key in _DETAIL_KEYS:
            value = details.get(key)
            if isinstance(value, str) and value.strip():
                return normalize_media_type(value)
        status = status_of(exc)
        for text in texts_of(exc):
            match = _NAMED_TYPE.search(text)
            if match and (status == 415 or _UNSUPPORTED.search(text)):
                return normalize_media_type(match.group(1))
    return None


def is_request_rejection(error: BaseException) -> bool:
    return any(
        isinstance(exc, ModelAPIError) and not exc.retryable and exc.status_code in _REJECTION_STATUSES
        for exc in iter_error_chain(error, max_depth=_MAX_CHAIN_DEPTH)
    )


def _standard(part: FilePart) -> bool:
    return is_standard_media_type(part.media_type)


def _user_files(messages: Iterable[Message]) -> list[FilePart]:
    return [p for m in messages if m.role == "user" for p in m.parts if isinstance(p, FilePart)]


def replace_rejected_files(prompt: list[Message], rejected: Collection[str]) -> list[Message] | None:
    """The prompt with rejected user files replaced by placeholders; None when no file is."""
    changed = False
    out: list[Message] = []
    for message in prompt:
        if message.role != "user" or not any(
            isinstance(p, FilePart) and is_rejected(p.media_type, rejected) for p in message.parts
        ):
            out.append(message)
            continue
        changed = True
        parts: list[Any] = [
            TextPart(placeholder(p)) if isinstance(p, FilePart) and is_rejected(p.media_type, rejected) else p
            for p in message.parts
        ]
        out.append(replace(message, parts=parts))
    return out if changed else None


class UnsupportedFileHandler(Processor):
    """Replaces files the model refused with placeholders and retries (see the module docstring)."""

    id = UNSUPPORTED_FILE_HANDLER_ID
    name = "Unsupported File Handler"

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        if args.retry_count != 0:
            return None
        messages = args.message_list.get_all()
        files = _user_files(messages)
        if not files:
            return None
        known: list[str] = list(args.state.get(REJECTED_MEDIA_TYPES_STATE_KEY, ()))
        named = named_media_type(args.error)
        if named is not None:
            candidate = named
        elif is_request_rejection(args.error) and not all(_standard(f) for f in files):
            candidate = ANY_MEDIA_TYPE
        else:
            return None
        if candidate in known:
            return None
        # Retry only if remembering the type changes what is sent.
        newly = [f for f in files if is_rejected(f.media_type, [*known, candidate])]
        if not newly or all(is_rejected(f.media_type, known) for f in newly):
            return None
        args.state[REJECTED_MEDIA_TYPES_STATE_KEY] = [*known, candidate]
        return APIErrorResult(retry=True)

    def wants_llm_request(self, state: Mapping[str, Any], model: str) -> bool:
        """False until a model rejected a file type (the runner then does not call process_llm_request)."""
        return bool(state.get(REJECTED_MEDIA_TYPES_STATE_KEY))

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
        rejected = args.state.get(REJECTED_MEDIA_TYPES_STATE_KEY)
        if not rejected:
            return None
        prompt = replace_rejected_files(args.prompt, rejected)
        if prompt is None:
            return None
        if not args.state.get("warned"):
            args.state["warned"] = True
            log.warning(
                "%s: replacing attachments the model rejected (%s) with placeholders",
                self.id,
                ", ".join(rejected),
            )
        return LLMRequestResult(prompt=prompt)
