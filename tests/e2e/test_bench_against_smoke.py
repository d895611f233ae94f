"""bench/against.py runs end to end (one short pair against HEAD) and leaves
no worktree behind. A smoke test only: it times nothing and checks no figure."""

from __future__ import annotations

import subprocess

from .serverproc import REPO_ROOT, run_bench


def worktrees() -> str:
    return subprocess.run(["git", "worktree", "list"], cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout


def test_the_side_by_side_benchmark_runs_both_trees_and_removes_its_worktree() -> None:
    before = worktrees()
    code, out = run_bench("against.py", "HEAD", "--pairs", "1", "--level", "4", "--seconds", "1")
    assert code == 0, out
    assert "\nerrors: 0\n" in out, out
    for line in ("this tree, 4 concurrent", "HEAD, 4 concurrent", "median pair"):
        assert line in out, out
    assert worktrees() == before


def test_a_revision_git_does_not_know_fails_before_anything_starts() -> None:
    before = worktrees()
    code, out = run_bench("against.py", "no-such-revision-anywhere", "--pairs", "1", "--seconds", "1")
    assert code != 0, out
    assert "git knows no commit 'no-such-revision-anywhere'" in out, out
    assert "Generate at" not in out, out
    assert worktrees() == before


def test_no_pairs_is_refused_before_anything_starts() -> None:
    code, out = run_bench("against.py", "HEAD", "--pairs", "0")
    assert code == 2, out
    assert "--pairs and --level must be at least 1" in out, out
