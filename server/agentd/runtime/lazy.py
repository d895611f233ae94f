"""Libraries only some configurations use, loaded on their first use.

`agentd serve` spends nearly all of its start-up importing modules, and
jsonschema (with referencing, attrs and its bundled specifications) and PyJWT
(with cryptography) were 40% of it, though they serve only request-context
schemas, judge answers and JWT authentication. `lazy(name)` returns the module
with its code run on the first attribute read (the standard library's
`importlib.util.LazyLoader`), so a server that never validates a schema or a
JWT never loads them. This is the one way agentd defers a library (provider
SDKs load by module name when a model of theirs is first resolved:
`models/router.py`); it is for start-up cost, never to dodge an import cycle.
Import the name under `TYPE_CHECKING` beside it, so the types stay checked.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

__all__ = ["lazy"]


def lazy(name: str) -> ModuleType:
    """`name`, loaded when first read. The modules deferred here are read on the
    event loop's thread only (LazyLoader on 3.11 is not safe when two threads
    make the first read at once)."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
