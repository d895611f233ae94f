"""The code the standard library writes as text and compiles while agentd is
imported, compiled once per install instead of at every start: the methods
`@dataclass` writes (`__init__`, `__repr__`, `__eq__`, ...), each forward
reference `typing` compiles (a string annotation, as in pydantic-core's
TypedDicts), each namedtuple's `__new__`.

On Python 3.11 those were some 1,800 compiles at each `agentd serve`, a third
of the instructions from exec to SERVING, more than loading every module's
bytecode. The text (and the mode it is compiled in) is all such code depends
on, so the code object is kept under it, as the interpreter keeps a module's
bytecode beside its source: a class whose fields changed has a new text,
finds nothing and is compiled as before, and what runs is exactly what
compiling that text would have built.

`cached()` is held around `agentd.cli`'s imports (the server's modules)
only; `dataclasses`, `typing` and `collections` are themselves again
afterwards.
The cache lives beside agentd's bytecode (`agentd/__pycache__/`) and is
written like bytecode: only where it may be (not under
PYTHONDONTWRITEBYTECODE, where `make setup` writes it as it compiles the
tree; not on a read-only install, where nothing is cached), and only when
the import compiled something the cache did not hold.

(No `from __future__ import annotations` here: `compile` inherits its
caller's future flags, and these modules' calls must compile as theirs do,
with none.)
"""

import builtins
import collections
import dataclasses
import importlib.util
import marshal
import os
import sys
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import CodeType, ModuleType
from typing import Any

#: A text and the mode it is compiled in, to its code.
Codes = dict[tuple[str, str], CodeType]

#: Where the standard library compiles text, each by a module-global name
#: (found before the builtin's): the module, the name and, for exec and eval,
#: the mode of the text they are given.
SITES: tuple[tuple[ModuleType, str, str | None], ...] = (
    (dataclasses, "exec", "exec"),  # each generated method
    (typing, "compile", None),  # ForwardRef: compile(text, "<string>", "eval")
    (collections, "eval", "eval"),  # namedtuple's __new__
)


def cache_path() -> str | None:
    """Where this interpreter's cache lives (named by its cache tag and
    optimization level, as bytecode is), or None where it keeps no bytecode."""
    try:
        pyc = importlib.util.cache_from_source(os.path.join(os.path.dirname(__file__), "generated_code.py"))
    except NotImplementedError:  # an interpreter without a cache tag
        return None
    return pyc.removesuffix(".pyc") + ".marshal"


def read(path: str) -> Codes:
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
    return {
        key: code
        for key, code in codes.items()
        if type(key) is tuple and len(key) == 2 and type(key[0]) is type(key[1]) is str and type(code) is CodeType
    }


def write(path: str, codes: Codes) -> None:
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
def cached(path: str | None = None) -> Iterator[Codes]:
    """While held, the standard library's texts are compiled once per cache
    (yields the code used, by mode and text); on leaving, the cache gains
    what was used, if anything was missing from it."""
    path = path if path is not None else cache_path()
    if path is None:
        yield {}
        return
    known = read(path)
    used: Codes = {}

    def code_of(mode: str, text: str) -> CodeType:
        code = known.get((mode, text))
        if code is None:
            code = builtins.compile(text, "<string>", mode, dont_inherit=True)
        used[mode, text] = code
        return code

    def running(inner: Callable[..., Any], mode: str) -> Callable[..., Any]:
        def run(source: Any, /, *args: Any, **kwargs: Any) -> Any:
            return inner(code_of(mode, source) if type(source) is str else source, *args, **kwargs)

        return run

    def compiling(inner: Callable[..., Any]) -> Callable[..., Any]:
        def compile_(
            source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False, optimize: int = -1
        ) -> Any:
            if type(source) is str and filename == "<string>" and flags == 0 and optimize == -1:
                return code_of(mode, source)
            return inner(source, filename, mode, flags, dont_inherit, optimize)

        return compile_

    replaced = []
    for module, name, mode in SITES:
        own = vars(module)
        previous = own.get(name)  # (another wrapper, if there is one)
        inner = previous if previous is not None else getattr(builtins, name)
        setattr(module, name, running(inner, mode) if mode else compiling(inner))
        replaced.append((module, name, previous))
    try:
        yield used
    finally:
        for module, name, previous in replaced:
            if previous is not None:
                setattr(module, name, previous)
            else:
                delattr(module, name)
        if not sys.dont_write_bytecode and any(key not in known for key in used):
            # What was there stays (an import of part of agentd, or another
            # path to it, must not undo what a whole one cached) unless it is
            # mostly what nothing uses any more.
            kept = {**known, **used}
            write(path, kept if len(kept) <= 2 * len(used) else used)
