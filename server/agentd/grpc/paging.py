"""Paging: opaque AIP-158 page tokens (a cursor bound to the list it came from)
and page sizes."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from agentd.grpc.violations import Violations
from agentd.runtime.errors import InvalidArgument

MAX_PAGE_SIZE = 1000


def encode(kind: str, cursor: Any) -> str:
    raw = json.dumps({"k": kind, "c": cursor}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(kind: str, token: str, field: str = "page_token") -> Any:
    if not token:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("k") != kind:
            raise ValueError("token of another list")
        return data.get("c")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidArgument.field(field, "is not a page token this list issued") from None


def page_size(value: int, field: str, v: Violations, default: int = 50) -> int:
    if value < 0:
        v.add(field, "must not be negative")
    return default if value <= 0 else min(value, MAX_PAGE_SIZE)
