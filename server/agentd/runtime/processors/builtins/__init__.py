"""Built-in processors, registered by name (see BUILTIN_FACTORIES)."""

from __future__ import annotations

from typing import Any

from agentd.runtime.processors.registry import Factory

BUILTIN_FACTORIES: dict[str, Factory] = {}


def _register_all() -> None:
    # Each module adds its processors to BUILTIN_FACTORIES on import.
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def builtin(name: str) -> Any:
    """Class decorator: registers `cls` under `name` with camelCase options."""
    from agentd.runtime.processors.registry import from_options

    def wrap(cls: Any) -> Any:
        BUILTIN_FACTORIES[name] = from_options(cls)
        return cls

    return wrap


_register_all()
