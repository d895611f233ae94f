"""The methods `@dataclass` writes (`__init__`, `__repr__`, `__eq__`, ...),
compiled once per install instead of at every start.

Python 3.11's `dataclasses` writes each method of each class as source text
and compiles it with `exec`: for the some 200 dataclasses `agentd serve`
imports, that was a third of the instructions from exec to SERVING, more than
loading every module's bytecode. The text is all a method's code depends on,
so a code object is kept under its text, the way the interpreter keeps a
module's bytecode beside its source: a class whose fields changed has a new
text, finds nothing and is compiled as before, and what runs is exactly what
`exec` of that text would have built.

`cached()` is held around the console script's import of `agentd.cli` only;
`dataclasses` is itself again afterwards. The cache lives beside agentd's
bytecode (`agentd/__pycache__/`) and is written like bytecode: only where it
may be (not under PYTHONDONTWRITEBYTECODE, where `make setup` writes it as it
compiles the tree, not on a read-only install, where nothing is cached), and
only when the import compiled something the cache did not hold.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib.util
import marshal
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import CodeType
from typing import Any


def cache_path() -> str | None:
    """Where this interpreter's cache lives (named by its cache tag and
    optimization level, as bytecode is), or None where it keeps no bytecode."""
    try:
        pyc = importlib.util.cache_from_source(os.path.join(os.path.dirname(__file__), "dataclass_methods.py"))
    except NotImplementedError:  # an interpreter without a cache tag
        return None
    return pyc.removesuffix(".pyc") + ".marshal"


def read(path: str) -> dict[str, CodeType]:
    """The cache at `path`; empty if it is missing, unreadable or another
    interpreter's."""
    magic = importlib.util.MAGIC_NUMBER
    try:
        with open(path, "rb") as f:
            data = f.read()
        if not data.startswith(magic):
            return {}
        codes = marshal.loads(data[len(magic) :])
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    if not isinstance(codes, dict):
        return {}
    return {text: code for text, code in codes.items() if isinstance(text, str) and isinstance(code, CodeType)}


def write(path: str, codes: dict[str, CodeType]) -> None:
    """Replaces the cache at once (a start reading it meanwhile sees the old
    one or the new one); where it cannot be written, nothing is cached."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(importlib.util.MAGIC_NUMBER + marshal.dumps(codes))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


@contextmanager
def cached(path: str | None = None) -> Iterator[dict[str, CodeType]]:
    """While held, `dataclasses` compiles each method's text once per cache
    (yields the code objects used, by text); on leaving, the cache holds what
    was used, if anything was missing from it."""
    path = path if path is not None else cache_path()
    if path is None:
        yield {}
        return
    known = read(path)
    used: dict[str, CodeType] = {}
    own = vars(dataclasses)
    had, inner = "exec" in own, own.get("exec", builtins.exec)  # (another wrapper's, if there is one)

    def compiled_exec(source: Any, /, *args: Any, **kwargs: Any) -> None:
        if type(source) is str:
            code = known.get(source)
            if code is None:
                # What exec(text) compiles: no future flags from here, the
                # interpreter's optimization level, the same file name.
                code = compile(source, "<string>", "exec", dont_inherit=True)
            used[source] = code
            source = code
        inner(source, *args, **kwargs)

    # `dataclasses` calls exec by its module-global name: this one is found first.
    setattr(dataclasses, "exec", compiled_exec)  # noqa: B010 (mypy knows no such attribute)
    try:
        yield used
    finally:
        if had:
            setattr(dataclasses, "exec", inner)  # noqa: B010
        else:
            delattr(dataclasses, "exec")
        if not sys.dont_write_bytecode and any(text not in known for text in used):
            write(path, used)
