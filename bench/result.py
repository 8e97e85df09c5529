"""A bench's machine-readable result: the rows it measured, each with what it was compared with in the same run.

Guarantees: ``row`` only collects; ``save`` writes the rows collected so far as JSON to the file named by
``LC_BENCH_RESULT`` (set by ``bench.report``) and does nothing without it, so a bench run by hand prints as before.
Every row names the bench that made it (the module run as ``__main__``, given by the caller) and says, in words,
what its figure was compared with in the same run (``"-"`` when nothing was: then the figure stands alone).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["VARIABLE", "Row", "load", "row", "save"]

VARIABLE = "LC_BENCH_RESULT"


@dataclass(frozen=True)
class Row:
    bench: str  # the module that measured it, e.g. ``bench.engine_bench``
    what: str  # what was measured, in words
    figure: str  # the figure, with its unit
    compared_with: str  # the baseline of the same run and the ratio to it, or "-"


ROWS: list[Row] = []


def row(bench: str, what: str, figure: str, compared_with: str = "-") -> None:
    ROWS.append(Row(bench, what, figure, compared_with))


def save() -> None:
    target = os.environ.get(VARIABLE)
    if target:
        Path(target).write_text(json.dumps([asdict(r) for r in ROWS], ensure_ascii=False, indent=1))


def load(path: Path) -> list[Row]:
    return [Row(**item) for item in json.loads(path.read_text())] if path.exists() else []
