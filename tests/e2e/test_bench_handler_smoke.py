"""bench/handler.py runs each way (timed, timed from a cold cache, and
counting bytecodes) with tiny numbers. A smoke test only: it times nothing and checks no figure."""

from __future__ import annotations

import pytest

from .serverproc import run_bench


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--calls", "20"], "µs of CPU a call"),
        (["--calls", "20", "--thrash", "1"], "1 MiB touched between calls"),
        (["--opcodes", "3"], "bytecodes and"),
    ],
    ids=["timed", "cold", "opcodes"],
)
def test_the_handler_benchmark_runs(args: list[str], says: str) -> None:
    code, out = run_bench("handler.py", *args)
    assert code == 0, out
    assert says in out, out
