"""Building the TypeScript stubs and client for the end-to-end tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .serverproc import REPO_ROOT

TS_GEN_DIR = REPO_ROOT / "gen" / "ts"
TS_CLIENT_DIR = REPO_ROOT / "clients" / "ts"
NODE_HINT = "Node.js 20 with npm (the nodejs and npm packages)"
BUILD_TIMEOUT_S = 600


def _text(out: str | bytes | None) -> str:
    """Output captured by TimeoutExpired is bytes even in text mode."""
    if isinstance(out, bytes):
        return out.decode("utf-8", errors="replace")
    return out or ""


def run(
    args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False, env=env)
    except subprocess.TimeoutExpired as err:
        pytest.fail(
            f"`{' '.join(args)}` in {cwd} timed out after {timeout}s:\n{_text(err.stdout)}\n{_text(err.stderr)}",
            pytrace=False,
        )


def _build_step(args: list[str], cwd: Path) -> None:
    result = run(args, cwd, BUILD_TIMEOUT_S)
    if result.returncode != 0:
        pytest.fail(
            f"`{' '.join(args)}` in {cwd} exited with {result.returncode}:\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}",
            pytrace=False,
        )


def npm_ci_and_build(npm: str, project: Path) -> None:
    _build_step([npm, "ci", "--no-audit", "--no-fund"], project)
    _build_step([npm, "run", "build"], project)
