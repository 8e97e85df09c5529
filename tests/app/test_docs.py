"""The repository documents itself: the ledger page names every event kind and every field of each; every relative
link and image of the docs resolves to a file of the repository (and an anchor to a heading of it); the README
stays short; every row of docs/measured.md names the bench that made it and a commit of this repository."""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path

from ledger.events.core import EVENT_CLASSES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ledger.md"
MEASURED = ROOT / "docs" / "measured.md"
PAGES = [ROOT / "README.md", ROOT / "SECURITY.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def sections() -> dict[str, str]:
    parts = re.split(r"^### `(\w+)`\s*$", DOC.read_text(), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_the_ledger_page_describes_every_kind_with_all_its_fields_and_nothing_that_does_not_exist() -> None:
    documented = sections()
    assert sorted(documented) == sorted(cls.KIND for cls in EVENT_CLASSES)
    for cls in EVENT_CLASSES:
        fields = {f.name for f in dataclasses.fields(cls)} - {"seq", "ts", "conversation_id"}
        rows = set(re.findall(r"^\| `(\w+)` \|", documented[cls.KIND], flags=re.MULTILINE))
        assert rows == fields, f"{cls.KIND}: documented {sorted(rows)}, real {sorted(fields)}"


def prose(text: str) -> str:
    """The text without fenced code blocks and inline code: a link's syntax there is an example, not a link."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats
    numbered."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", prose_keeping_code(page.read_text()), flags=re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found


def prose_keeping_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text())) if not re.match(r"[a-z]+:", target)]


def test_every_relative_link_and_image_of_the_docs_resolves_to_a_file_of_the_repository_and_its_heading() -> None:
    broken = []
    for page in PAGES:
        for target in links(page):
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.is_relative_to(ROOT) or not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file in the repository)")
            elif anchor and (file.suffix != ".md" or anchor not in anchors(file)):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_link_check_sees_links_images_and_anchors() -> None:
    found = {target for page in PAGES for target in links(page)}
    assert {"docs/audit.png", "docs/tour.md", "SECURITY.md"} <= found
    assert any("#" in target for target in found)
    assert "the-provider-paths-cpu" in anchors(ROOT / "docs" / "operations.md")


def test_the_readme_is_at_most_200_lines_with_the_two_set_up_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    assert "python3.11 tasks.py app " in text and "python3.11 tasks.py test " in text


SEPARATOR = re.compile(r"\|(\s*:?-+:?\s*\|)+$")


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row that is not a header or a separator (``\\|`` is a bar inside a cell)."""
    lines = text.splitlines()
    headers = {n - 1 for n, line in enumerate(lines) if SEPARATOR.match(line)}
    return [
        [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        for n, line in enumerate(lines)
        if line.startswith("|") and not SEPARATOR.match(line) and n not in headers
    ]


def test_every_row_of_measured_names_the_bench_that_made_it_and_a_commit_of_this_repository() -> None:
    text = MEASURED.read_text()
    header = next(line for line in text.splitlines() if line.startswith("| bench |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = table_rows(text)
    assert rows, "docs/measured.md has no measured row: run python -m bench.report"
    for cells in rows:
        assert len(cells) == len(columns), cells
        row = dict(zip(columns, cells, strict=True))
        bench = re.fullmatch(r"`bench\.(\w+)`", row["bench"])
        assert bench and (ROOT / "bench" / f"{bench.group(1)}.py").exists(), f"no bench made this row: {cells}"
        commit = row["commit"]
        assert re.fullmatch(r"[0-9a-f]{7,40}", commit), f"not a commit (uncommitted code?): {commit}"
        known = subprocess.run(
            ["git", "merge-base", "--is-ancestor", commit, "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        assert known.returncode == 0, f"{commit} is not in this repository's git log: {known.stderr}"
        for column in ("date (UTC)", "cores", "load average", "compared with, same run"):
            assert row[column], f"{column} missing: {cells}"
