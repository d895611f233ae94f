"""Editor override versions as the backends keep them: the codec's tagged
JSON, checked on the way back."""

from __future__ import annotations

from agentd.runtime import codec
from agentd.runtime.cache import CacheError
from agentd.runtime.overrides import OverrideValues, OverrideVersion
from agentd.runtime.storage import StorageError

__all__ = ["decode_version", "encode_version"]

codec.register(OverrideValues)
codec.register(OverrideVersion)


def encode_version(version: OverrideVersion) -> bytes:
    return codec.encode(version)


def decode_version(body: bytes | str) -> OverrideVersion:
    try:
        decoded = codec.decode(body)
    except CacheError as exc:
        raise StorageError(f"a stored overrides version cannot be read: {exc}") from exc
    if not isinstance(decoded, OverrideVersion):
        raise StorageError(f"a stored overrides version is a {type(decoded).__name__}")
    return decoded
