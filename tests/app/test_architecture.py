"""The house rules, read from the source: arrows point one way, no import circles, no reaching into privates.

Every import counts, including those under ``if TYPE_CHECKING:`` and inside functions: the rules are about what
a module knows, not about what runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.house import PACKAGES, ROOT, find_cycle, imports, modules, project_edges

#: The rooms a module's size is checked in, the most lines a module there may have, and the generated files that
#: are excepted by name (the utility CSS is compiled by ``tests/support/utilities_css.py``).
SIZED = ("ledger", "store", "engine", "ui", "editor", "app", "demo")
MAX_LINES = 300
GENERATED = {"ui/static/utilities.css"}
#: What each layer may not import (project packages and third-party top-level names).
BACK_ENDS = {"tinydb", "psycopg", "psycopg_pool", "store.tinydb", "store.postgres", "store.migrate.copying"}
FORBIDDEN = {
    # the domain is pure: no storage, no I/O, no clock, no threads, nothing above it
    "ledger": {
        "store",
        "engine",
        "ui",
        "editor",
        "app",
        "demo",
        "main",
        "nicegui",
        "acp",
        "litellm",
        "httpx",
        "mcp",
        "tinydb",
        "psycopg",
        "psycopg_pool",
        "threading",
        "os",
        "pathlib",
        "time",
        "asyncio",
        "socket",
        "subprocess",
        "tempfile",
        "fcntl",
        "shutil",
    },
    "store": {"engine", "ui", "editor", "app", "demo", "main", "nicegui", "litellm", "httpx", "mcp", "acp"},
    "engine": {"ui", "editor", "app", "demo", "main", "nicegui", "acp", *BACK_ENDS},  # the cluster: wired in app/
    "ui": {"editor", "app", "demo", "main", "litellm", "mcp", "acp", *BACK_ENDS},
    # the editors' front door (ACP), beside ui/: the engine's face and the ledger's values, never a page or a store
    "editor": {"ui", "app", "demo", "main", "nicegui", "litellm", "mcp", "store", *BACK_ENDS},
    "app": {"main"},
    "demo": {"ledger", "store", "engine", "ui", "editor", "app", "main"},
}
#: The two back ends stand side by side: neither imports the other.
SIDE_BY_SIDE = {
    "store.tinydb": {"store.postgres", "psycopg", "psycopg_pool"},
    "store.postgres": {"store.tinydb", "tinydb"},
}


def broken_rules(mods: dict[str, Path]) -> list[str]:
    """Every import that breaks a layer's rule or the back ends' side-by-side rule, as a sentence."""
    bad = []
    for name, path in mods.items():
        rules = set(FORBIDDEN.get(name.split(".")[0], ()))
        for room, banned in SIDE_BY_SIDE.items():
            if name == room or name.startswith(room + "."):
                rules |= banned
        for target, names in imports(path):
            for candidate in (target, *(f"{target}.{n}" for n in names)):
                if any(candidate == f or candidate.startswith(f + ".") for f in rules):
                    bad.append(f"{name} imports {candidate}")
                    break
    return bad


def oversized(root: Path) -> list[str]:
    """Every module (Python, JavaScript, CSS) in the sized rooms over ``MAX_LINES`` lines, generated files aside."""
    found = []
    for room in SIZED:
        for path in sorted((root / room).rglob("*")):
            if path.suffix not in (".py", ".js", ".css") or path.relative_to(root).as_posix() in GENERATED:
                continue
            if (lines := len(path.read_text().splitlines())) > MAX_LINES:
                found.append(f"{path.relative_to(root).as_posix()}: {lines} lines")
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_each_layer_imports_only_what_is_below_it(layer: str) -> None:
    bad = [line for line in broken_rules(modules()) if line.split(".")[0].split(" ")[0] == layer]
    assert not bad, "\n".join(bad)


def test_the_layer_rules_catch_a_forbidden_import_anywhere_in_a_module(tmp_path: Path) -> None:
    cases = {
        "ledger.bad": "def f():\n    import threading\n",
        "ledger.bad2": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from store.api import EventStore\n",
        "ledger.bad3": "from pathlib import Path\n",
        "store.bad": "from engine.commands.engine import Engine\n",
        "store.tinydb.bad": "from store.postgres.store import PgStore\n",
        "store.postgres.bad": "import tinydb\n",
        "engine.bad": "from nicegui import ui\n",
        "engine.bad2": "from store.postgres.store import PgStore\n",
        "ui.bad": "from store.tinydb.store import Store\n",
        "editor.bad": "from nicegui import ui\n",
        "engine.bad3": "from editor.agent import LedgerAgent\n",
    }
    mods = {}
    for name, source in cases.items():
        (path := tmp_path / f"{name}.py").write_text(source)
        mods[name] = path
    assert sorted(line.split(" ")[0] for line in broken_rules(mods)) == sorted(cases)


def test_no_module_in_the_rooms_is_over_the_house_size() -> None:
    assert oversized(ROOT) == [], "split these by what they do"


def test_the_size_rule_sees_a_long_module_and_leaves_generated_files_alone(tmp_path: Path) -> None:
    (tmp_path / "engine").mkdir()
    (tmp_path / "ui" / "static").mkdir(parents=True)
    (tmp_path / "engine" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "engine" / "fits.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "ui" / "static" / "utilities.css").write_text("a {}\n" * 1000)
    assert oversized(tmp_path) == [f"engine/long.py: {MAX_LINES + 1} lines"]


def test_no_two_project_modules_import_each_other_even_through_others() -> None:
    assert find_cycle(project_edges()) is None, f"import cycle: {' -> '.join(find_cycle(project_edges()) or [])}"


def test_the_cycle_check_sees_imports_under_type_checking(tmp_path: Path) -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from engine.commands.engine import Engine\n"
    path = tmp_path / "m.py"
    path.write_text(source)
    assert ("engine.commands.engine", ("Engine",)) in imports(path)
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
        imported = {  # our own modules (the standard library's ``os._exit`` is public, its underscore aside)
            alias.asname or alias.name
            for n in ast.walk(tree)
            if isinstance(n, ast.Import)
            for alias in n.names
            if alias.name.split(".")[0] in (*PACKAGES, "tests", "main")
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
