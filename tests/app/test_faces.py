"""Folders with a face, read from the source: no circle between packages (``engine`` ⇄ ``engine.tools`` was one),
every package's ``__init__`` says what it guarantees and lists its public names in ``__all__``, and code outside a
package imports only those names. Tests and benches may reach inside a package; the product may not."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.house import ROOT, find_cycle, imports, modules, package_edges


def is_package(mods: dict[str, Path], name: str) -> bool:
    return name in mods and mods[name].name == "__init__.py"


def public(mods: dict[str, Path], package: str) -> set[str] | None:
    """The names a package's ``__init__`` lists in ``__all__`` (None: it has none)."""
    for node in ast.parse(mods[package].read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return {str(e.value) for e in getattr(node.value, "elts", []) if isinstance(e, ast.Constant)}
    return None


def reached_into(mods: dict[str, Path]) -> list[str]:
    """Every import, by a module outside a package, of a name that package does not list in ``__all__``."""
    bad = []
    for name, path in mods.items():
        for target, names in imports(path):
            parts = target.split(".")
            for i in range(1, len(parts) + 1):  # each package on the way in that the importer is not part of
                package = ".".join(parts[:i])
                if not is_package(mods, package) or name == package or name.startswith(package + "."):
                    continue
                listed = public(mods, package) or set()
                wanted = [parts[i]] if i < len(parts) else list(names)
                if missing := [f"{name} imports {package}.{n} (not in its __all__)" for n in wanted if n not in listed]:
                    bad += missing
                    break
    return bad


def faceless(mods: dict[str, Path]) -> list[str]:
    """Every package whose ``__init__`` lacks a docstring or ``__all__``."""
    bad = []
    for name, path in mods.items():
        if path.name == "__init__.py" and name != "main":
            tree = ast.parse(path.read_text())
            if ast.get_docstring(tree) is None or public(mods, name) is None:
                bad.append(f"{path.relative_to(path.parents[len(name.split('.'))])}: no docstring or no __all__")
    return bad


def write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    mods = {}
    for name, source in files.items():
        path = root / (name.replace(".", "/") + ("/__init__.py" if name.endswith("!") else ".py")).replace("!", "")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        mods[name.removesuffix("!")] = path
    return mods


def test_no_two_packages_import_each_other_even_through_others() -> None:
    cycle = find_cycle(package_edges(modules()))
    assert cycle is None, f"packages in a circle: {' -> '.join(cycle or [])}"


def test_the_package_circle_check_sees_a_package_and_its_sub_package_importing_each_other(tmp_path: Path) -> None:
    mods = write(tmp_path, {
        "engine!": '"""x"""\n__all__ = []\n', "engine.tools!": '"""x"""\n__all__ = ["run"]\n',
        "engine.attempt": "from engine.tools import run\n", "engine.tools.runs": "from engine.attempt import x\n",
    })  # fmt: skip
    assert find_cycle(package_edges(mods)) == ["engine", "engine.tools", "engine"]


def test_every_package_states_its_guarantees_and_its_public_names() -> None:
    assert faceless(modules()) == []


def test_the_face_check_sees_a_package_without_a_docstring_or_an_all(tmp_path: Path) -> None:
    mods = write(
        tmp_path, {"engine!": '"""x"""\n__all__ = []\n', "engine.a!": "__all__ = []\n", "engine.b!": '"""x"""'}
    )
    assert sorted(line.split(":")[0] for line in faceless(mods)) == ["engine/a/__init__.py", "engine/b/__init__.py"]


def test_outside_a_package_only_the_names_it_lists_are_imported() -> None:
    assert reached_into(modules()) == [], "import these through the package's face (its __init__'s __all__)"


def test_the_face_check_sees_a_reach_into_a_package_and_a_name_it_does_not_list(tmp_path: Path) -> None:
    mods = write(tmp_path, {
        "engine!": '"""x"""\n__all__ = ["tools", "offline"]\n', "engine.offline": "x = 1\n",
        "engine.tools!": '"""x"""\n__all__ = ["ToolHub"]\n',
        "engine.tools.hub": "class ToolHub: ...\nclass Other: ...\n",
        "ui!": '"""x"""\n__all__ = ["fine", "deep", "hidden"]\n',
        "ui.fine": "from engine.tools import ToolHub\nfrom engine.offline import x\n",
        "ui.deep": "from engine.tools.hub import ToolHub\n", "ui.hidden": "from engine.tools import Other\n",
        "engine.tools.inside": "from engine.tools.hub import Other\n",
    })  # fmt: skip
    assert sorted(reached_into(mods)) == [
        "ui.deep imports engine.tools.hub (not in its __all__)",
        "ui.hidden imports engine.tools.Other (not in its __all__)",
    ]


def test_the_rules_read_the_real_tree() -> None:
    assert (ROOT / "engine" / "attempts" / "__init__.py").exists() and is_package(modules(), "engine.attempts")
