"""Every ErrorInfo reason the server can answer is in the contract's reason
table (protos/agentd/v1/README.md), and the Java client's `Reasons` names
exactly that table: a reason added in code without its row, or a row the Java
constants miss, fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agentd.runtime import errors

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "protos" / "agentd" / "v1" / "README.md"
JAVA = ROOT / "clients/java/client/src/main/java/io/github/agentd/client/Reasons.java"
REASON = re.compile(r"[A-Z][A-Z_]{3,}")
#: Raised where no caller can see it, with why.
NOT_ON_THE_WIRE = {
    "AGENT_ALREADY_EXISTS": "two agents with one id: a start-up error of the config or --app, never an answer",
}
ERROR_CLASSES = {
    name for name, value in vars(errors).items() if isinstance(value, type) and issubclass(value, errors.AgentdError)
} | {"field", "fields"}


def documented() -> set[str]:
    return set(re.findall(r"^\| `([A-Z_]+)` \|", TABLE.read_text(), flags=re.MULTILINE))


def raised() -> dict[str, str]:
    """Reasons given to an agentd error's constructor anywhere in the server, with where."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "server" / "agentd").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name not in ERROR_CLASSES:
                continue
            for arg in [*node.args, *(k.value for k in node.keywords if k.arg == "reason")]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and REASON.fullmatch(arg.value):
                    found.setdefault(arg.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_reason_the_server_raises_has_its_row() -> None:
    found = raised()
    assert len(found) > 30  # the scan sees the server's errors
    missing = {r: where for r, where in found.items() if r not in documented() and r not in NOT_ON_THE_WIRE}
    assert not missing, f"reasons without a row in {TABLE.relative_to(ROOT)}: {missing}"


def test_the_java_reasons_are_the_table() -> None:
    if not JAVA.exists():
        pytest.skip("no Java client in this tree")
    java = set(re.findall(r'public static final String ([A-Z_]+) = "\1";', JAVA.read_text()))
    assert java == documented(), {"not in Java": documented() - java, "not in the table": java - documented()}
