"""bench/handler.py runs both ways (timed, and counting bytecodes) with tiny
numbers. A smoke test only: it times nothing and checks no figure."""

from __future__ import annotations

import subprocess
import sys

import pytest

from .serverproc import REPO_ROOT


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--calls", "20"], "µs of CPU a call"), (["--opcodes", "3"], "bytecodes and")],
    ids=["timed", "opcodes"],
)
def test_the_handler_benchmark_runs(args: list[str], says: str) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "handler.py"), *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert says in out, out
