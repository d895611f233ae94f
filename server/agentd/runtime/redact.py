"""Secrets never leave the process in error text, log lines or spans.

Two nets: the secrets agentd knows (provider API keys it was given, and any
environment variable named like a secret), replaced wherever they appear; and
the shapes API keys and bearer tokens have, for a secret it does not know (a
provider quoting back a key it rejected, say)."""

from __future__ import annotations

import logging
import os
import re
import threading
import traceback
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["REDACTED", "add_named_secrets", "add_secret", "install_log_redaction", "redact", "redact_mapping"]

REDACTED = "[REDACTED]"
#: Shorter values are too likely to be ordinary words to be replaced everywhere.
_MIN_SECRET = 8
#: Environment variables whose values are secrets.
_SECRET_NAMES = re.compile(r"(?:^|_)(?:API_KEY|ACCESS_KEY|PRIVATE_KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.IGNORECASE)
#: API keys and tokens by their shape: OpenAI/Anthropic (`sk-...`), Google (`AIza...`),
#: GitHub/Slack-style tokens, and whatever follows "Bearer".
_SHAPES = re.compile(
    r"\bsk-[A-Za-z0-9_\-]{12,}"
    r"|\bAIza[0-9A-Za-z_\-]{30,}"
    r"|\b(?:gh[pousr]|xox[abpr])_?[A-Za-z0-9\-]{16,}"
    r"|\bagentd_[A-Za-z0-9_\-]{20,}"
    r"|(?i:bearer)\s+[A-Za-z0-9._~+/\-]{8,}=*"
)

_lock = threading.Lock()
_known: set[str] = set()
_scanned = False


def add_secret(value: str | None) -> None:
    """Replace `value` wherever it appears from now on (an API key, a token)."""
    if value and len(value.strip()) >= _MIN_SECRET:
        with _lock:
            _known.add(value.strip())


def add_named_secrets(values: Mapping[str, str]) -> None:
    """The values of `values` whose names are named like secrets (an
    environment given to a subprocess: `GITHUB_TOKEN`, not `PATH`)."""
    for name, value in values.items():
        if _SECRET_NAMES.search(name):
            add_secret(value)


def _secrets() -> list[str]:
    global _scanned
    if not _scanned:
        add_named_secrets(os.environ)
        _scanned = True
    with _lock:
        return sorted(_known, key=len, reverse=True)  # a longer secret first: it may contain a shorter one


def redact(text: str) -> str:
    for secret in _secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    return _SHAPES.sub(REDACTED, text)


def redact_mapping(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every string inside redacted, however deep (error metadata, a provider's error body)."""
    return {key: _redact_value(value) for key, value in values.items()}


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return redact_mapping(value)
    if isinstance(value, list | tuple):
        return type(value)(_redact_value(item) for item in value)
    return value


def install_log_redaction() -> None:
    """Every log record of this process is redacted when it is made (its
    message and any traceback), so every handler sees it redacted."""
    previous: Callable[..., logging.LogRecord] = logging.getLogRecordFactory()
    if getattr(previous, "agentd_redacts", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a malformed format: leave it to the handler's own error path
            return record
        record.msg, record.args = redact(message), None
        if record.exc_info and record.exc_info[0] is not None:
            record.exc_text = redact("".join(traceback.format_exception(*record.exc_info)).rstrip("\n"))
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return record

    factory.agentd_redacts = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)
