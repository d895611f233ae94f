"""What the storage backends keep as the cache codec's tagged JSON: a thread's
metadata and the messages, checked on the way back (a row written by something
else raises StorageError, never hands back a value of the wrong type)."""

from __future__ import annotations

from datetime import datetime

from agentd.runtime import codec
from agentd.runtime.cache import CacheError
from agentd.runtime.messages import Message
from agentd.runtime.storage import StorageError, Thread

__all__ = ["decode_message", "decode_thread", "encode_metadata"]


def encode_metadata(thread: Thread) -> bytes:
    try:
        return codec.encode(thread.metadata)
    except CacheError as exc:
        raise StorageError(f"thread {thread.id}: metadata cannot be stored: {exc}") from exc


def decode_thread(
    thread_id: str, resource_id: str, title: str, metadata: bytes | str, created_at: datetime, updated_at: datetime
) -> Thread:
    """The thread a stored row describes (its metadata as encode_metadata wrote it)."""
    decoded = codec.decode(metadata)
    if not isinstance(decoded, dict):
        raise StorageError(f"thread {thread_id}: stored metadata is not a dict")
    return Thread(thread_id, resource_id, title, decoded, created_at, updated_at)


def decode_message(body: bytes | str, where: str) -> Message:
    """The message in a stored `body`; `where` names it in the error ("a stored message")."""
    message = codec.decode(body)
    if not isinstance(message, Message):
        raise StorageError(f"{where} holds a {type(message).__name__}")
    return message
