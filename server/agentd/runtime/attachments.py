"""Attachments the model cannot fetch itself (placeholder: the real module replaces this)."""

from __future__ import annotations

from typing import Any

from agentd.runtime.models.base import LanguageModel, ModelRequest
from agentd.runtime.processors.message_list import MessageList


async def prepare_attachments(
    request: ModelRequest, model: LanguageModel, message_list: MessageList, state: dict[str, Any]
) -> ModelRequest:
    """Returns the request with attachments made fetchable by the model."""
    return request
