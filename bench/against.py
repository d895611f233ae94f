"""Side by side with another revision: Generate under the same ghz command
(bench/load.py's), against this tree's `agentd serve` and against the one of
REV (any git revision: a commit, a tag, a branch), in pairs, interleaved.

    python bench/against.py REV [--pairs 5] [--level 50] [--seconds 20]

REV is checked out into a temporary git worktree, removed at the end, and
served by this interpreter from its own `server/` and `gen/python/` (this
environment's libraries: what it runs on is the same for both). Each tree
runs its own default event loop unless --loop says otherwise. The pairs go
ABBA (this tree first, then REV first, and so on), so a machine that speeds
up or slows down during the run favours neither side.

Prints each run (calls/s, p50, p99, errors, the server's and ghz's CPU per
call), each pair's ratio of calls/s, the median pair and the ratio of the
totals, and p99 at its worst on either side. Asserts nothing; exits 1 when
any call failed. Issue 16's goal for this figure: at least 2x the calls/s of
042941d (the code it was filed against) at 50 concurrent, with p99 no worse.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

import load
import servers

#: A tree's agentd started as the console script would: `agentd.entry`'s main (`agentd.cli`'s in an older tree).
_START = 'import sys; from agentd.{} import main; sys.argv[0] = "agentd"; sys.exit(main())'


def checkout(rev: str, into: Path) -> Path:
    """`rev` in a detached worktree at `into` (the revision named in the error when git knows none)."""
    known = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=servers.ROOT, capture_output=True
    )
    if known.returncode != 0:
        raise SystemExit(f"bench/against.py: git knows no commit {rev!r} in {servers.ROOT}")
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(into), rev], cwd=servers.ROOT, check=True)
    return into


def remove(tree: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=servers.ROOT, check=False)


def launcher(tree: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment that serve `tree`'s agentd from its sources."""
    code = _START.format("entry" if (tree / "server" / "agentd" / "entry.py").exists() else "cli")
    path = f"{tree / 'server'}:{tree / 'gen' / 'python'}"
    return [sys.executable, "-c", code], {"PYTHONPATH": path}


async def one_run(work: Path, tools: load.Tools, name: str, tree: Path | None, args: argparse.Namespace) -> load.Result:
    command, env = launcher(tree) if tree is not None else (None, None)
    server = servers.start_agentd(
        work, name, env=env, cwd=tree or servers.ROOT, serve_args=servers.serve_loop_args(args.loop), command=command
    )
    try:
        await servers.wait_ready(server)
        await load.drive(tools, server, "warm-up", load.GENERATE, 10, min(args.seconds, 2))
        print(f"{name}: Generate at {args.level} concurrent calls for {args.seconds:g} s ...", flush=True)
        return await load.drive(
            tools, server, f"{name}, {args.level} concurrent", load.GENERATE, args.level, args.seconds
        )
    finally:
        server.stop()


async def run(args: argparse.Namespace, work: Path) -> int:
    ghz_binary = None if args.no_ghz else load.ghz_path()
    if ghz_binary is None:
        print("ghz not found (make tools): Generate is driven by grpc.aio from here")
    tools = load.Tools(ghz_binary, load.build_protoset(work))
    tree = checkout(args.rev, work / "tree")
    try:
        pairs: list[tuple[load.Result, load.Result]] = []
        for i in range(args.pairs):
            sides = [("this tree", None), (args.rev, tree)]
            if i % 2:  # ABBA: the order alternates
                sides.reverse()
            done = {name: await one_run(work, tools, name, at, args) for name, at in sides}
            pairs.append((done["this tree"], done[args.rev]))
    finally:
        remove(tree)
    print(f"\nGenerate at {args.level} concurrent, this tree against {args.rev}, {args.pairs} pairs interleaved")
    load.print_table([r for pair in pairs for r in pair])
    ratios = [ours.rps / theirs.rps for ours, theirs in pairs]
    print("  pairs: " + ", ".join(f"{r:.2f}x" for r in ratios))
    total = sum(o.calls for o, _ in pairs) / sum(o.seconds for o, _ in pairs)
    their_total = sum(t.calls for _, t in pairs) / sum(t.seconds for _, t in pairs)
    print(
        f"  median pair {statistics.median(ratios):.2f}x; totals {total:.0f} against {their_total:.0f} calls/s,"
        f" {total / their_total:.2f}x"
    )
    p99 = max(o.percentile(0.99) for o, _ in pairs), max(t.percentile(0.99) for _, t in pairs)
    print(f"  p99 at its worst: {p99[0]:.1f} ms against {p99[1]:.1f} ms")
    errors = sum(r.error_count for pair in pairs for r in pair)
    print(f"\nerrors: {errors}")
    return 0 if errors == 0 else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rev", help="the git revision to set beside this tree (e.g. 042941d)")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--level", type=int, default=50, help="concurrent Generates")
    parser.add_argument("--seconds", type=float, default=20, help="each run's duration")
    parser.add_argument("--loop", choices=servers.LOOPS, default="auto", help="agentd serve --loop, both trees")
    parser.add_argument("--no-ghz", action="store_true", help="drive Generate from grpc.aio here")
    args = parser.parse_args()
    if args.pairs < 1 or args.level < 1 or args.seconds <= 0:
        parser.error("--pairs and --level must be at least 1, --seconds more than 0")
    load.run_in_work_dir("agentd-bench-against-", run, args)


if __name__ == "__main__":
    main()
