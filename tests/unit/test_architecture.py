"""The house rules of server/agentd, measured by tools/archcheck.py: no import
cycle (counting imports inside functions and under TYPE_CHECKING), few imports
inside functions, no module over 700 lines, and the floors' edges."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from agentd.grpc.agent_service import AgentService
from agentd.grpc.cache_service import CacheService
from agentd.grpc.signal_service import SignalService
from agentd.grpc.thread_service import ThreadService
from agentd_proto.v1 import (
    agent_service_pb2_grpc,
    cache_service_pb2_grpc,
    signal_service_pb2_grpc,
    thread_service_pb2_grpc,
)

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("archcheck", ROOT / "tools" / "archcheck.py")
assert _spec is not None and _spec.loader is not None
archcheck = importlib.util.module_from_spec(_spec)
sys.modules["archcheck"] = archcheck
_spec.loader.exec_module(archcheck)
MODULES = archcheck.load()


def every_import(name: str) -> set[str]:
    mod = MODULES[name]
    return set(mod.imports) | mod.typing_only | {t for _, t in mod.inner}


def test_no_import_cycle_even_through_imports_in_functions() -> None:
    assert archcheck.cycles(archcheck.graph(MODULES, every=True)) == []


def test_at_most_ten_agentd_imports_inside_functions() -> None:
    inner = {(m.name, line) for m in MODULES.values() for line, _ in m.inner}
    assert len(inner) <= 10, sorted(inner)


def test_no_module_over_700_lines() -> None:
    assert [(m.name, m.lines) for m in MODULES.values() if m.lines > 700] == []


def test_the_runtime_never_reaches_up_to_backends_transport_or_entry() -> None:
    for name in MODULES:
        if name.startswith("agentd.runtime"):
            up = {t for t in every_import(name) if not t.startswith("agentd.runtime")}
            assert up == set(), f"{name} imports {sorted(up)}"
    for path in (ROOT / "server" / "agentd" / "runtime").rglob("*.py"):
        assert "import grpc" not in path.read_text(), path


def test_the_transport_is_thin() -> None:
    servicers = {"agent_service", "thread_service", "signal_service", "cache_service"}
    for name in MODULES:
        if not name.startswith("agentd.grpc."):
            continue
        imported = every_import(name)
        builtins = {t for t in imported if t.startswith("agentd.runtime.processors.builtins")}
        assert builtins == set(), f"{name} imports built-in processors {sorted(builtins)}"
        if name.rsplit(".", 1)[-1] in servicers:
            others = {t for t in imported if t.rsplit(".", 1)[-1] in servicers and t != name}
            assert others == set(), f"servicer modules import each other: {name} -> {sorted(others)}"


def test_every_servicer_subclasses_its_generated_servicer() -> None:
    assert issubclass(AgentService, agent_service_pb2_grpc.AgentServiceServicer)
    assert issubclass(ThreadService, thread_service_pb2_grpc.ThreadServiceServicer)
    assert issubclass(SignalService, signal_service_pb2_grpc.SignalServiceServicer)
    assert issubclass(CacheService, cache_service_pb2_grpc.CacheServiceServicer)


def test_nothing_subclasses_the_thread_runtime() -> None:
    for path in (ROOT / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                assert not bases & {"ThreadRuntime", "threads.ThreadRuntime"}, f"{path}: {node.name}"
