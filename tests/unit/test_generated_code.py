"""The code the standard library writes as text, compiled once per install
(agentd.generated_code): a dataclass, a forward reference and a namedtuple
built from the cache are what compiling their text builds, the cache holds
what an import used, and a cache that is missing, foreign or corrupt costs
only the compiling it was meant to save."""

from __future__ import annotations

import collections
import dataclasses
import importlib.util
import marshal
import subprocess
import sys
import textwrap
import typing
from pathlib import Path

import pytest

from agentd import generated_code


def build() -> type:
    """A dataclass with every method `dataclasses` writes (__init__ with
    defaults and a factory, __repr__, __eq__, ordering, __hash__, frozen), a
    forward reference and a namedtuple."""

    # Built by make_dataclass: its fields' types are types, not this
    # module's postponed annotations' strings.
    Point = dataclasses.make_dataclass(
        "Point",
        [
            ("x", int),
            ("y", int, dataclasses.field(default=2)),
            ("tags", tuple, dataclasses.field(default_factory=tuple)),
        ],
        frozen=True,
        order=True,
    )
    Point.ref = typing.ForwardRef("dict[str, Point]")
    Point.Pair = collections.namedtuple("Pair", ["left", "right"])
    return Point


def check(point: type) -> None:
    a, b = point(1), point(1, 3, ("t",))
    assert (a.x, a.y, a.tags) == (1, 2, ())
    assert repr(b) == "Point(x=1, y=3, tags=('t',))"
    assert a == point(1) and a != b and a < b and hash(a) == hash(point(1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 5  # type: ignore[misc]
    # The generated __init__'s annotations are the fields' types, not the
    # names they are passed by: compiled without the caller's future flags.
    assert point.__init__.__annotations__["y"] is int
    assert typing._eval_type(point.ref, {"Point": point}, None) == dict[str, point]  # type: ignore[attr-defined]
    assert point.Pair(1, right=2) == (1, 2) and point.Pair._fields == ("left", "right")
    with pytest.raises(SyntaxError, match="Forward reference must be an expression"):
        typing.ForwardRef("not an expression ::")


@pytest.fixture
def writable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


def test_a_class_built_from_the_cache_is_the_class_exec_builds(tmp_path: Path, writable: None) -> None:
    path = str(tmp_path / "methods.marshal")
    with generated_code.cached(path) as first:
        check(build())
    assert Path(path).read_bytes().startswith(importlib.util.MAGIC_NUMBER)
    assert generated_code.read(path) == first
    assert sum(mode == "exec" for mode, _ in first) >= 6  # __init__, __repr__, __eq__, orders, __hash__...
    new = "lambda _cls, left, right: _tuple_new(_cls, (left, right))"
    assert {("eval", "dict[str, Point]"), ("eval", new)} < set(first)  # the reference, the namedtuple's __new__

    before = Path(path).stat().st_mtime_ns
    with generated_code.cached(path) as second:
        check(build())
    assert second == first
    assert Path(path).stat().st_mtime_ns == before  # nothing was missing: nothing written


def test_the_standard_library_is_itself_again_after(tmp_path: Path, writable: None) -> None:
    sites = [(dataclasses, "exec"), (typing, "compile"), (collections, "eval")]
    with generated_code.cached(str(tmp_path / "m.marshal")):
        assert all(name in vars(module) for module, name in sites)
    assert not any(name in vars(module) for module, name in sites)
    with pytest.raises(RuntimeError), generated_code.cached(str(tmp_path / "m.marshal")):
        raise RuntimeError
    assert not any(name in vars(module) for module, name in sites)


def test_a_missing_foreign_or_corrupt_cache_is_compiled_and_replaced(tmp_path: Path, writable: None) -> None:
    path = tmp_path / "methods.marshal"
    other_magic = b"\x00\x00\r\n" + marshal.dumps({("exec", "def f(): pass"): compile("", "", "exec")})
    not_codes = importlib.util.MAGIC_NUMBER + marshal.dumps({"def f(): pass": 1, ("eval", "1"): 1})
    for stale in (b"", b"not a cache", other_magic, not_codes):
        path.write_bytes(stale)
        assert generated_code.read(str(path)) == {}
        with generated_code.cached(str(path)) as used:
            check(build())
        assert generated_code.read(str(path)) == used
    # Mostly what nothing uses any more (other classes' texts): replaced by what was used.
    stale_codes = {(mode, f"{text} # {n}"): code for (mode, text), code in used.items() for n in range(3)}
    path.write_bytes(importlib.util.MAGIC_NUMBER + marshal.dumps(stale_codes))
    with generated_code.cached(str(path)):
        check(build())
    assert generated_code.read(str(path)) == used


def test_an_import_of_part_keeps_what_a_whole_one_cached(tmp_path: Path, writable: None) -> None:
    path = str(tmp_path / "methods.marshal")
    with generated_code.cached(path) as whole:
        check(build())
        dataclasses.make_dataclass("Other", [("z", str)])
    with generated_code.cached(path) as part:
        check(build())  # part of it...
        dataclasses.make_dataclass("New", [("w", bytes)])  # ...and something new
    assert set(part) < set(whole) | set(part) == set(generated_code.read(path))


def test_nothing_is_written_where_bytecode_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    with generated_code.cached(str(tmp_path / "m.marshal")):
        check(build())
    not_a_directory = tmp_path / "a-file"  # (a read-only directory would not stop root)
    not_a_directory.write_text("")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    with generated_code.cached(str(not_a_directory / "m.marshal")):
        check(build())
    assert list(tmp_path.rglob("*.marshal")) == [] and list(tmp_path.rglob("*.tmp")) == []


def test_the_cache_lives_beside_agentds_bytecode() -> None:
    path = generated_code.cache_path()
    assert path is not None
    assert Path(path).parent == Path(generated_code.__file__).parent / "__pycache__"
    assert Path(path).name == f"generated_code.{sys.implementation.cache_tag}.marshal"


def test_the_server_s_modules_are_imported_through_the_cache(tmp_path: Path) -> None:
    # A first start fills the cache; a second finds everything in it.
    path = str(tmp_path / "methods.marshal")
    probe = textwrap.dedent(
        f"""
        import contextlib, sys
        sys.dont_write_bytecode = False
        from agentd import generated_code
        known, real, used = generated_code.read({path!r}), generated_code.cached, {{}}
        @contextlib.contextmanager
        def cached():
            with real({path!r}) as codes:
                yield codes
            used.update(codes)
        generated_code.cached = cached
        import agentd.entry
        assert agentd.entry.main.__module__ == "agentd.cli" and "exec" not in vars(generated_code.dataclasses)
        assert len({{mode for mode, _ in used}}) == 2
        print(len(used), sum(text not in known for text in used))
        """
    )
    runs = [subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120) for _ in "12"]
    (used, missed), (used_again, missed_again) = (tuple(map(int, r.stdout.split() or (0, 0))) for r in runs)
    assert used > 100 and missed == used, runs
    assert used_again == used and missed_again == 0, runs
