"""A cheap estimate of how many bytes a value holds in this process: what the
in-process bounds (the memory cache, the thread logs) count against."""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

__all__ = ["approximate_size"]

#: Deeper than this, a value is counted as a reference only (cycles, deep trees).
_MAX_DEPTH = 32


def approximate_size(value: Any, _depth: int = 0) -> int:
    """Strings and bytes by length, containers and dataclasses by their parts,
    everything else by `sys.getsizeof`. An estimate, not an accounting: it
    keeps a bound honest without walking the interpreter's own structures."""
    if isinstance(value, str | bytes | bytearray):
        return 49 + len(value)
    if value is None or isinstance(value, bool | int | float):
        return 28
    if _depth >= _MAX_DEPTH:
        return 64
    depth = _depth + 1
    if isinstance(value, dict):
        return 64 + sum(approximate_size(k, depth) + approximate_size(v, depth) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return 56 + 8 * len(value) + sum(approximate_size(item, depth) for item in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return 56 + sum(approximate_size(getattr(value, f.name), depth) for f in dataclasses.fields(value))
    return sys.getsizeof(value)
