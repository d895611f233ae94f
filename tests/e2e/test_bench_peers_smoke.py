"""bench/peers.py's agentd side runs end to end (--no-mastra --quick, one run):
every workload's client checks its own output against a real `agentd serve`
and the bare server, so a broken check or workload fails here. A smoke test
only: it times nothing and checks no figure (Mastra needs `npm ci` in
bench/peers, which `make bench-peers` runs)."""

from __future__ import annotations

import subprocess
import sys

from .serverproc import REPO_ROOT


def test_the_peer_benchmark_runs_agentds_side_and_every_check_passes() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench" / "peers.py"), "--no-mastra", "--quick", "--runs", "1"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    for row in (
        "stream, 2000 deltas, 3 pass-through",
        "generate, 5-word reply, p50",
        "response-cache hit, p50",
        "cold",
    ):
        assert row in out, out
