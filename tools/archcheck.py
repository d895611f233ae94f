"""The house rules for server/agentd, measured: import cycles, imports inside
functions, module sizes and the layer edges. `python tools/archcheck.py`
prints the figures; tests/test_architecture.py holds the tree to them."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "server"
PACKAGE = "agentd"


@dataclass
class Module:
    name: str
    path: Path
    lines: int
    # module -> first line of a top-level (run-time) import of it
    imports: dict[str, int] = field(default_factory=dict)
    # (line, module) of agentd imports made inside a function body
    inner: list[tuple[int, str]] = field(default_factory=list)
    # imports only under `if TYPE_CHECKING:`
    typing_only: set[str] = field(default_factory=set)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(node: ast.AST, current: str, is_package: bool, known: set[str]) -> list[str]:
    """The agentd modules an import statement loads (a name that is itself a
    submodule counts as that submodule)."""
    out: list[str] = []
    if isinstance(node, ast.Import):
        out = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = _resolve(current, is_package, node)
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            out.append(sub if sub in known else base)
    return [m for m in out if m == PACKAGE or m.startswith(PACKAGE + ".")]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _visit(
    node: ast.AST, mod: Module, is_package: bool, known: set[str], *, in_function: bool, typing_only: bool
) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            for target in _targets(child, mod.name, is_package, known):
                if in_function:
                    mod.inner.append((child.lineno, target))
                elif typing_only:
                    mod.typing_only.add(target)
                else:
                    mod.imports.setdefault(target, child.lineno)
            continue
        func = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        tc = isinstance(child, ast.If) and _is_type_checking(child.test)
        _visit(child, mod, is_package, known, in_function=in_function or func, typing_only=typing_only or tc)


def load() -> dict[str, Module]:
    paths = sorted((ROOT / PACKAGE).rglob("*.py"))
    known = {_module_name(p) for p in paths}
    modules: dict[str, Module] = {}
    for path in paths:
        name = _module_name(path)
        source = path.read_text()
        mod = Module(name, path, source.count("\n") + (0 if source.endswith("\n") else 1))
        is_package = path.name == "__init__.py"
        tree = ast.parse(source)

        _visit(tree, mod, is_package, known, in_function=False, typing_only=False)
        modules[name] = mod
    return modules


def _parents(name: str) -> list[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def graph(modules: dict[str, Module], *, every: bool = False) -> dict[str, set[str]]:
    """Import edges; with every=True also those made inside functions and under
    TYPE_CHECKING, which dodge a cycle at run time but keep it in the design."""
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, mod in modules.items():
        targets = set(mod.imports)
        if every:
            targets |= mod.typing_only | {t for _, t in mod.inner}
        for target in targets:
            if target in modules and target != name:
                edges[name].add(target)
            # a package's __init__ that its own submodule imports is no cycle of
            # ideas, but a package importing a parent package is still an edge
            for parent in _parents(target):
                if parent in modules and parent != name and not name.startswith(parent + "."):
                    edges[name].add(parent)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def main() -> int:
    modules = load()
    edges = graph(modules)
    found = cycles(edges)
    hidden = cycles(graph(modules, every=True))
    inner = sorted({(m.name, line, t) for m in modules.values() for line, t in m.inner})
    statements = {(name, line) for name, line, _ in inner}
    big = sorted(((m.lines, m.name) for m in modules.values() if m.lines > 700), reverse=True)
    print(f"modules: {len(modules)}")
    print(f"import cycles (strongly connected groups): {len(found)}")
    for comp in found:
        print("  " + " <-> ".join(comp))
    print(f"cycles counting imports inside functions and under TYPE_CHECKING: {len(hidden)}")
    for comp in hidden:
        print("  " + " <-> ".join(comp))
    print(f"agentd import statements inside functions: {len(statements)}")
    for name, line, target in inner:
        print(f"  {name}:{line} -> {target}")
    print(f"modules over 700 lines: {len(big)}")
    for lines, name in big:
        print(f"  {name}: {lines}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
