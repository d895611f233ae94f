"""The methods `@dataclass` writes, compiled once per install
(agentd.dataclass_code): a class built from the cache is the class `exec`
builds, the cache holds what an import used, and a cache that is missing,
foreign or corrupt costs only the compiling it was meant to save."""

from __future__ import annotations

import dataclasses
import importlib.util
import marshal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentd import dataclass_code


def build() -> type:
    """A dataclass with every method `dataclasses` writes: __init__ with
    defaults and a factory, __repr__, __eq__, ordering, __hash__, frozen."""

    @dataclasses.dataclass(frozen=True, order=True)
    class Point:
        x: int
        y: int = 2
        tags: tuple[str, ...] = dataclasses.field(default_factory=tuple)

    return Point


def check(point: type) -> None:
    a, b = point(1), point(1, 3, ("t",))
    assert (a.x, a.y, a.tags) == (1, 2, ())
    assert repr(b) == f"{point.__qualname__}(x=1, y=3, tags=('t',))"
    assert a == point(1) and a != b and a < b and hash(a) == hash(point(1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5  # type: ignore[misc]


@pytest.fixture
def writable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def test_a_class_built_from_the_cache_is_the_class_exec_builds(tmp_path: Path, writable: None) -> None:
    path = str(tmp_path / "methods.marshal")
    with dataclass_code.cached(path) as first:
        check(build())
    assert Path(path).read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    assert dataclass_code.read(path) == first and len(first) >= 6  # init, repr, eq, 4 orders, hash, set/delattr

    before = Path(path).stat().st_mtime_ns
    with dataclass_code.cached(path) as second:
        check(build())
    assert second == first
    assert Path(path).stat().st_mtime_ns == before  # nothing was missing: nothing written


def test_dataclasses_is_itself_again_after(tmp_path: Path, writable: None) -> None:
    with dataclass_code.cached(str(tmp_path / "m.marshal")):
        assert "exec" in vars(dataclasses)
    assert "exec" not in vars(dataclasses)
    with pytest.raises(RuntimeError), dataclass_code.cached(str(tmp_path / "m.marshal")):
        raise RuntimeError
    assert "exec" not in vars(dataclasses)


def test_a_missing_foreign_or_corrupt_cache_is_compiled_and_replaced(tmp_path: Path, writable: None) -> None:
    path = tmp_path / "methods.marshal"
    for stale in (b"", b"not a cache", b"\x00\x00\r\n" + marshal.dumps({"def f(): pass": 1})):
        path.write_bytes(stale)
        assert dataclass_code.read(str(path)) == {}
        with dataclass_code.cached(str(path)) as used:
            check(build())
        assert dataclass_code.read(str(path)) == used
    changed = {text.replace("y", "why"): code for text, code in used.items()}  # another class's texts
    path.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(changed))
    with dataclass_code.cached(str(path)):
        check(build())
    assert dataclass_code.read(str(path)) == used  # what was used, not what was there


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with dataclass_code.cached(str(tmp_path / "m.marshal")):
        check(build())
    not_a_directory = tmp_path / "a-file"  # (a read-only directory would not stop root)
    not_a_directory.write_text("")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with dataclass_code.cached(str(not_a_directory / "m.marshal")):
        check(build())
    assert list(tmp_path.rglob("*.marshal")) == [] and list(tmp_path.rglob("*.tmp")) == []


def test_the_cache_lives_beside_agentds_bytecode() -> None:
    path = dataclass_code.cache_path()
    assert path is not None
    assert Path(path).parent == Path(dataclass_code.__file__).parent / "__pycache__"
    assert Path(path).name == f"dataclass_methods.{sys.implementation.cache_tag}.marshal"


def test_the_console_script_imports_the_server_through_the_cache(tmp_path: Path) -> None:
    # A first start fills the cache; a second finds every method in it.
    path = str(tmp_path / "methods.marshal")
    probe = textwrap.dedent(
        f"""
        import contextlib, sys
        sys.dont_write_bytecode = False
        from agentd import dataclass_code
        known, real, used = dataclass_code.read({path!r}), dataclass_code.cached, {{}}
        @contextlib.contextmanager
        def cached():
            with real({path!r}) as codes:
                yield codes
            used.update(codes)
        dataclass_code.cached = cached
        import agentd.entry
        assert agentd.entry.main.__module__ == "agentd.cli" and "exec" not in vars(dataclass_code.dataclasses)
        print(len(used), sum(text not in known for text in used))
        """
    )
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120) for _ in "12"]
    (used, missed), (used_again, missed_again) = (tuple(map(int, r.stdout.split() or (0, 0))) for r in runs)
    assert used > 100 and missed == used, runs
    assert used_again == used and missed_again == 0, runs
