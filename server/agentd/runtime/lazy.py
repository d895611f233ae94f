"""Modules only some configurations use, loaded on their first use.

`agentd serve` spends nearly all of its start-up importing modules, and
jsonschema (with referencing, attrs and its bundled specifications) and PyJWT
(with cryptography) were 40% of it, though they serve only request-context
schemas, judge answers and JWT authentication. `lazy(name)` returns the module
with its code run on the first attribute read (the standard library's
`importlib.util.LazyLoader`), so a server that never validates a schema or a
JWT never loads them; the OpenTelemetry SDK, the terminal chat client and
sqlite3 wait the same way. `resolve("module:name")` imports a module when a
registry's name is first used (the built-in processors: `processors/catalogue.py`),
and `lazy_exports` is a package's `__getattr__` doing the same for the names it
re-exports (`agentd.runtime`). This is the one way agentd defers a module
(provider SDKs load by module name when a model of theirs is first resolved:
`models/router.py`); it is for start-up cost, never to dodge an import cycle.
Import the name under `TYPE_CHECKING` beside it, so the types stay checked.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["lazy", "lazy_exports", "resolve"]

#: The specs of the modules made lazy here: a lazy package's submodules are
#: found through its spec, since reading the package itself would load it.
_specs: dict[str, ModuleSpec] = {}


def lazy(name: str) -> ModuleType:
    """`name`, loaded when first read. A submodule's packages are made lazy too
    (a package's `__init__` is often what costs: opentelemetry.sdk.metrics's
    loads the whole metrics SDK). The modules deferred here are read on the
    event loop's thread only (LazyLoader on 3.11 is not safe when two threads
    make the first read at once)."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    package, _, child = name.rpartition(".")
    spec = _find(name, package)
    if spec is not None and spec.loader is None and spec.submodule_search_locations is not None:
        return importlib.import_module(name)  # a namespace package: no code to defer
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _specs[name] = spec
    loader.exec_module(module)
    if package:
        setattr(sys.modules[package], child, module)  # as an import does (a lazy package stays unloaded)
    return module


def _find(name: str, package: str) -> ModuleSpec | None:
    if not package:
        return importlib.util.find_spec(name)
    lazy(package)
    parent = _specs.get(package) or sys.modules[package].__spec__
    search = parent.submodule_search_locations if parent is not None else None
    if search is None:
        raise ModuleNotFoundError(f"No module named {name!r}; {package!r} is not a package", name=name)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        found = find(name, search) if find is not None else None
        if found is not None:
            return found  # type: ignore[no-any-return]
    return None


def resolve(path: str) -> Any:
    """What "module:name" names, its module imported now (through the import
    system's locks, so any thread may): for a registry of names whose modules
    load when one of them is first used."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's `__getattr__` (PEP 562) that reads each name of `exports`
    (name -> module) from its module on first use, so importing the package,
    which importing any module below it does, loads none of them."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = resolve(f"{module}:{name}")
        setattr(sys.modules[package], name, value)  # read once: later reads are plain attributes
        return value

    return __getattr__
