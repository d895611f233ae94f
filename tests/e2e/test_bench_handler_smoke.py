"""bench/handler.py runs both ways (timed, and counting bytecodes) with tiny
numbers. A smoke test only: it times nothing and checks no figure."""

from __future__ import annotations

import pytest

from .serverproc import run_bench


@pytest.mark.parametrize(
    ("args", "says"),
    [(["--calls", "20"], "µs of CPU a call"), (["--opcodes", "3"], "bytecodes and")],
    ids=["timed", "opcodes"],
)
def test_the_handler_benchmark_runs(args: list[str], says: str) -> None:
    code, out = run_bench("handler.py", *args)
    assert code == 0, out
    assert says in out, out
