"""`agentd serve --app bench.memprofile`: the server with tracemalloc on.

Each SIGUSR1 dumps a tracemalloc snapshot to
$AGENTD_BENCH_TRACEMALLOC_DIR/<n>.snapshot (n = 0, 1, ...), so bench/load.py
can compare the heap before and after it opens idle subscriptions. Hosts no
agents of its own. Only Python allocations are traced: grpc core's C memory
(HTTP/2 streams, call arenas) shows in RSS, never here.
"""

from __future__ import annotations

import itertools
import os
import signal
import tracemalloc
from pathlib import Path
from types import FrameType

#: Deep enough to reach the agentd (or grpc) frame behind an asyncio allocation.
FRAMES = 30

agents: list[object] = []

_out = Path(os.environ.get("AGENTD_BENCH_TRACEMALLOC_DIR", "."))
_numbers = itertools.count()


def _dump(signum: int, frame: FrameType | None) -> None:
    path = _out / f"{next(_numbers)}.snapshot"
    tracemalloc.take_snapshot().dump(str(path.with_suffix(".tmp")))
    path.with_suffix(".tmp").rename(path)  # whole, or not there yet


tracemalloc.start(FRAMES)
signal.signal(signal.SIGUSR1, _dump)
