"""The house rules, read from the source: arrows point one way, no import circles, no reaching into privates.

Every import counts, including those under ``if TYPE_CHECKING:`` and inside functions: the rules are about what
a module knows, not about what runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ledger", "engine", "ui", "demo")
#: What each layer may not import (project packages and third-party top-level names).
FORBIDDEN = {
    "ledger": {"engine", "ui", "demo", "nicegui", "litellm", "httpx", "mcp", "main"},
    "engine": {"ui", "demo", "nicegui", "main", "psycopg", "psycopg_pool"},
    "ui": {
        "demo",
        "litellm",
        "tinydb",
        "main",
        "ledger.store",
        "ledger.storage",
        "ledger.documents",
        "psycopg",
        "psycopg_pool",
        "ledger.pg_store",
        "ledger.copying",
    },
    "demo": {"engine", "ui", "ledger", "main"},
}


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


def project_edges() -> dict[str, set[str]]:
    mods = modules()
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


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_what_is_below_it(layer: str) -> None:
    bad = []
    for name, path in modules().items():
        if name.split(".")[0] != layer:
            continue
        for target, _ in imports(path):
            if any(target == f or target.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{name} imports {target}")
    assert not bad, "\n".join(bad)


def test_no_two_project_modules_import_each_other_even_through_others() -> None:
    assert find_cycle(project_edges()) is None, f"import cycle: {' -> '.join(find_cycle(project_edges()) or [])}"


def test_the_cycle_check_sees_imports_under_type_checking(tmp_path: Path) -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engine.engine import Engine\n"
    path = tmp_path / "m.py"
    path.write_text(source)
    assert ("engine.engine", ("Engine",)) in imports(path)
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]


def test_no_module_takes_another_modules_private_names() -> None:
    bad = []
    mods = modules()
    for name, path in [*mods.items(), *((p.stem, p) for p in (ROOT / "tests").rglob("*.py"))]:
        for target, names in imports(path):
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            if private and target.split(".")[0] in (*PACKAGES, "tests", "main"):
                bad.append(f"{name} imports {private} from {target}")
        tree = ast.parse(path.read_text())
        imported = {
            alias.asname or alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in imported
            ):
                bad.append(f"{name} uses {node.value.id}.{node.attr}")
    assert not bad, "\n".join(bad)


def test_nothing_refers_to_files_outside_the_repository() -> None:
    team_notes, section = "shared/" + "DESIGN", "DESIGN" + " §"  # spelled apart so this file does not match
    offenders = []
    for path in [*ROOT.glob("*.md"), *ROOT.glob("*.py"), *(ROOT / "docs").rglob("*.md")]:
        offenders += [str(path) for line in path.read_text().splitlines() if team_notes in line]
    for name, path in modules().items():
        if section in path.read_text():
            offenders.append(name)
    assert not offenders
