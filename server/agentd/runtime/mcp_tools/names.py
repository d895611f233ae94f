"""The names an MCP server's tools are offered to models under.

MCP allows a tool any name ("files.read", "search/web", "über"), but
providers do not: OpenAI and Anthropic take `^[a-zA-Z0-9_-]{1,64}$`, Google
also wants a letter or `_` first. A name every provider takes is offered as
it is; any other is rewritten into that shape ("files.read" -> "files_read"),
the call still reaching the server under the name it listed. A rewritten
name that would collide with another of the same listing, or that had to be
cut to length, gets a suffix from a hash of the listed name, so the mapping
depends only on the listing's names (not their order) and is the same after
a restart."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["MAX_NAME", "offered_names"]

#: The longest tool name every provider takes.
MAX_NAME = 64
_SAFE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
_UNSAFE_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_SUFFIX = 9  # "_" and 8 hex digits


def offered_names(listed: Iterable[str]) -> dict[str, str]:
    """Each listed name -> the name models see (itself when every provider takes it)."""
    names = list(dict.fromkeys(listed))
    rewritten = {name: _rewrite(name) for name in names if not _SAFE.match(name)}
    taken = Counter(rewritten.get(name, name) for name in names)
    offered: dict[str, str] = {}
    for name in names:
        plain = rewritten.get(name)
        if plain is None:
            offered[name] = name
        elif taken[plain] > 1 or len(plain) > MAX_NAME:
            offered[name] = f"{plain[: MAX_NAME - _SUFFIX]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
        else:
            offered[name] = plain
    return offered


def _rewrite(name: str) -> str:
    plain = _UNSAFE_CHARS.sub("_", name) or "_"
    return plain if plain[0].isalpha() or plain[0] == "_" else f"_{plain}"
