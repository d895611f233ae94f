"""Durations as agentd.toml and processor options write them: "30m", "2h",
"1h30m", "500ms", or a number of seconds. Imports nothing of agentd, so any
layer (config, processors, notifications) can use it."""

from __future__ import annotations

import re
from datetime import timedelta

__all__ = ["parse_duration"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: str | int | float | timedelta) -> timedelta:
    """ "30m", "2h", "45s", "1h30m", "500ms", "1d"; a number is seconds. ValueError otherwise."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    elif isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and _DURATION.fullmatch(value.strip().lower()):
        seconds = sum(float(n) * _UNITS[u] for n, u in _DURATION_PART.findall(value.strip().lower()))
    else:
        raise ValueError(f'not a duration: {value!r} (use e.g. "45s", "30m", "2h", "1h30m")')
    if seconds < 0:
        raise ValueError(f"a duration must not be negative: {value!r}")
    return timedelta(seconds=seconds)
