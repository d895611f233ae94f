"""bench/load.py runs end to end (its --quick path with tiny numbers) and
reports no errors. A smoke test only: it times nothing, and of the figures
it checks only that the event-loop thread's CPU is part of the server's."""

from __future__ import annotations

import os

from .serverproc import run_bench


def test_the_load_benchmark_runs_and_reports_no_errors() -> None:
    tiny = ["--levels", "4", "--streams", "4", "--subscriptions", "20", "--generates", "4"]
    seconds = ["--generate-seconds", "1", "--stream-seconds", "1", "--idle-seconds", "1"]
    code, out = run_bench("load.py", "--quick", *tiny, *seconds)
    assert code == 0, out
    assert "\nerrors: 0\n" in out, out
    for case in (
        "Generate, 4 concurrent",
        "bare Generate, 4 concurrent",
        "Stream, 4 concurrent",
        "4 Generates beside them",
    ):
        assert case in out, out
    # Each row splits the server's CPU per call: its event-loop thread's share is part of the whole.
    assert "its loop thread" in out, out
    row = next(line for line in out.splitlines() if line.strip().startswith("Generate, 4 concurrent"))
    calls, server_us, loop_us = int(row.split()[4]), *(float(v) for v in row.split()[-3:-1])
    tick_us = 1e6 / os.sysconf("SC_CLK_TCK") / calls  # /proc counts CPU time in clock ticks
    assert 0 <= loop_us <= server_us + tick_us, row
