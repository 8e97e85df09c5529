"""Damage found in a data folder, kept aside and said in words: a whole file moved aside, or a log's damaged tail.

Guarantees:
- ``keep_aside(path, writable, write)`` moves a damaged ``path`` to ``<name>.corrupt-<time>`` (never deletes it)
  and, given a ``replacement``, writes that in its place; without ``writable`` (export, a read-only folder) it
  changes nothing. The returned ``Aside`` says whether it moved and the words that say where to.
- ``cut_log(cid, path, found, writable, report)`` handles a log that ``records.scan`` found damaged: with
  ``writable`` its tail from the first damaged record on is kept aside as ``conv-<id>.log.corrupt-<time>`` and
  cut off (``logfile.cut_tail``), so the log ends with its last complete record; a tail that cannot be kept aside
  stays where it is (the writer keeps it aside before it appends anything: ``logfile``). Either way it is one
  ``report`` naming the conversation, the damage, the records kept and where the cut part is: never silent,
  never a refusal to open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from store.tinydb.logfile import cut_tail, log_path
from store.tinydb.records import Scan

Report = Callable[[str, str], object]


@dataclass(frozen=True, slots=True)
class Aside:
    """Whether a damaged path was moved aside, and the words that say so in a report."""

    moved: bool
    note: str


def keep_aside(
    path: Path, *, writable: bool, write: Callable[[Path, dict[str, Any]], None], replacement: dict[str, Any] | None
) -> Aside:
    """Move ``path`` aside and ``write`` ``replacement`` in its place (only when writable)."""
    if not writable or not (path.exists() or path.is_symlink()):
        return Aside(moved=False, note="")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    kept = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        path.replace(kept)
    except OSError as exc:
        return Aside(moved=False, note=f" (it could not be kept aside: {why(exc)})")
    if replacement is not None:
        write(path, replacement)
    return Aside(moved=True, note=f". The original is kept at {kept.name}")


def cut_log(cid: str, path: Path, found: Scan, *, writable: bool, report: Report) -> None:
    """Keep a damaged log's tail aside and cut it off (when ``writable``), and say so."""
    log = log_path(path)
    lost = found.size - found.end
    if not writable:
        action, note = "read", ""
    else:
        try:
            kept = cut_tail(log, found.end)
        except OSError as exc:
            action, note = "read", f"; the rest could not be kept aside yet ({why(exc)}), it is before the next write"
        else:
            action, note = "cut back", f". The cut part is kept at {kept}"
    report(
        f"log:{log.name}",
        f"Conversation {cid}: its log is damaged ({found.problem}); {action} to the {found.records} complete "
        f"record(s) before the damage ({lost:,} byte(s) after them){note}.",
    )


def why(exc: BaseException) -> str:
    """A few words for an error found while reading."""
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return type(exc).__name__
