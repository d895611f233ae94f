"""bench/peers.py's agentd side runs end to end (--no-mastra --quick, one run):
every workload's client checks its own output against a real `agentd serve`
and the bare server, so a broken check or workload fails here. A smoke test
only: it times nothing and checks no figure (Mastra needs `npm ci` in
bench/peers, which `make bench-peers` runs)."""

from __future__ import annotations

from .serverproc import run_bench


def test_the_peer_benchmark_runs_agentds_side_and_every_check_passes() -> None:
    code, out = run_bench("peers.py", "--no-mastra", "--quick", "--runs", "1", timeout=300)
    assert code == 0, out
    for row in (
        "stream, 2000 deltas, 3 pass-through",
        "generate, 5-word reply, p50",
        "response-cache hit, p50",
        "cold",
    ):
        assert row in out, out
