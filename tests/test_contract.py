"""The contract: Buf lint clean, no breaking change against the baseline, and
the committed stubs under gen/ exactly what `make gen` produces (Java's
through Maven, so this needs mvn on PATH)."""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUF = Path(sys.prefix) / "bin" / "buf"
GO_PLUGINS = ROOT / ".tools" / "bin"
TS_PLUGIN = ROOT / "tools" / "ts-gen" / "node_modules" / ".bin" / "protoc-gen-ts_proto"
GENERATED = ("python/agentd_proto/v1", "go/agentd", "ts/src", "java/src/main/java")


def run(*cmd: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(c) for c in cmd], cwd=ROOT, capture_output=True, text=True, check=False)


def test_buf_lint_passes() -> None:
    result = run(BUF, "lint")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_breaking_change_against_the_baseline() -> None:
    result = run(BUF, "breaking", "--against", "protos/baseline.binpb")
    assert result.returncode == 0, result.stdout + result.stderr


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_regenerating_the_stubs_changes_nothing(tmp_path: Path) -> None:
    for tool in (GO_PLUGINS / "protoc-gen-go", GO_PLUGINS / "protoc-gen-go-grpc", TS_PLUGIN):
        if not tool.exists():
            pytest.fail(f"{tool} is missing: run `make tools` (needs Go and npm)")
    result = run(
        sys.executable,
        "tools/gen.py",
        "--go-plugins",
        GO_PLUGINS,
        "--ts-plugin",
        TS_PLUGIN,
        "--out",
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    drift = []
    for sub in GENERATED:
        fresh, committed = tmp_path / sub, ROOT / "gen" / sub
        theirs, ours = _files(fresh), _files(committed)
        drift += [f"{sub}/{f}: only in a fresh generation" for f in sorted(theirs - ours)]
        drift += [f"{sub}/{f}: not generated any more" for f in sorted(ours - theirs)]
        drift += [
            f"{sub}/{f}: differs"
            for f in sorted(theirs & ours)
            if not filecmp.cmp(fresh / f, committed / f, shallow=False)
        ]
    assert not drift, "gen/ drifted from protos/ (run `make gen` and commit):\n" + "\n".join(drift)
