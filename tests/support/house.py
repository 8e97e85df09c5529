"""The project's modules and the arrows between them, read from the source (every import counts, including those
under ``if TYPE_CHECKING:`` and inside functions): what the house rules (tests/app) are checked against."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("ledger", "store", "engine", "ui", "editor", "app", "demo")


def modules() -> dict[str, Path]:
    found = {"main": ROOT / "main.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(module imported, names taken from it) for every import statement in the file, wherever it is."""
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, tuple(alias.name for alias in node.names)))
    return found


def project_edges(mods: dict[str, Path] | None = None) -> dict[str, set[str]]:
    mods = modules() if mods is None else mods
    edges: dict[str, set[str]] = {name: set() for name in mods}
    for name, path in mods.items():
        for target, names in imports(path):
            for candidate in (target, *(f"{target}.{n}" for n in names)):
                if candidate in mods and candidate != name:
                    edges[name].add(candidate)
    return edges


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def package_of(name: str, path: Path) -> str:
    """The package a module belongs to (a package's ``__init__`` belongs to the package itself)."""
    return name if path.name == "__init__.py" else name.rpartition(".")[0] or name


def package_edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Arrows between packages: one wherever a module of one imports a module of another."""
    edges = project_edges(mods)
    found: dict[str, set[str]] = {package_of(n, p): set() for n, p in mods.items()}
    for name, targets in edges.items():
        for target in targets:
            a, b = package_of(name, mods[name]), package_of(target, mods[target])
            if a != b:
                found[a].add(b)
    return found
