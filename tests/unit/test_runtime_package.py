"""agentd.runtime as a package: what it exports, and what importing it sets up."""

from __future__ import annotations

import subprocess
import sys

import agentd.runtime as runtime
from agentd.runtime.processors import base


def test_processor_authors_import_the_processor_api_from_agentd_runtime() -> None:
    hook_args = {
        name for name, value in vars(base).items() if isinstance(value, type) and issubclass(value, base.HookArgs)
    }
    assert {"ProcessInputArgs", "ProcessOutputStreamArgs", "ProcessAPIErrorArgs"} <= hook_args
    assert hook_args | {"Processor", "dataclass_from_options", "from_options"} <= set(runtime.__all__)
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None
    assert runtime.__all__ == sorted(runtime.__all__)


def test_any_runtime_import_registers_the_default_error_lane() -> None:
    # A fresh interpreter that imports only the lane module: the package's
    # __init__ runs first and registers the built-in defaults.
    code = (
        "from agentd.runtime.lanes import resolve_error_processors\n"
        "print(','.join(p.id for p in resolve_error_processors([])))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert (
        out.strip()
        == "provider-history-compat,prefill-error-handler,unsupported-file-handler,stream-error-retry-processor"
    )
