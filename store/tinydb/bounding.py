"""Conversation files that hold texts over the bound (written before it, or planted): their long texts moved into
blobs before the file is read, so that opening a conversation never parses or holds a text of any size.

Guarantees:
- ``bound_docs(docs, put)`` changes stored documents in place so that no string in them is over
  ``ledger.bounds.TEXT_BOUND``: a ``submitted`` text and a ``tool_result``'s text (its ``content``, a part's
  ``text``, ``structured``) are put whole as a blob (``put``: UTF-8 bytes in, sha256 out) and leave their preview
  and a ``whole`` reference (``ledger.events.TextRef``), as new writes do; any other string over the bound (an
  answer's text, a chunk, a title) is cut to its preview and counted in ``Bounded.cut``. Documents that already
  carry ``whole`` are kept as they are (bounding twice changes nothing).
- ``bound_file(path, put)`` does that to one conversation file. The file is replaced only when something changed,
  atomically (``store.tinydb.storage.atomic_write``: temp file, fsync, rename): a crash at any point leaves the old
  file or the new one, and the blobs are durable before the new file names them. When a text was cut, the original
  file is first kept beside it as ``<name>.whole-<time>`` (a hard link, before the rename): nothing is lost.
- ``Bounding`` is what the TinyDB back end is given to do it (``store.blobs.bounding.FolderBounding``): ``put`` in
  this process for a file up to ``OVERSIZE_FILE``, ``rewrite`` in another process for a larger one, whose parsing
  would hold this process's interpreter lock for as long as it takes (a thread does not help); None when that
  process failed (the file is then read here, as before).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ledger.bounds import TEXT_BOUND, encoded, is_over, preview
from store.tinydb.storage import atomic_write, dumps, loads

#: A conversation file over this size is bounded by another process before this one parses it.
OVERSIZE_FILE = 4 * 1024 * 1024
TABLE = "events"
Put = Callable[[bytes], str]


@dataclass(frozen=True, slots=True)
class Bounded:
    """What bounding a file did: texts moved into blobs, texts cut (the original kept ``aside``, a file name)."""

    moved: int = 0
    cut: int = 0
    aside: str | None = None

    def as_doc(self) -> dict[str, Any]:
        return {"moved": self.moved, "cut": self.cut, "aside": self.aside}


class Bounding(Protocol):
    def put(self, data: bytes) -> str:
        """Store a whole text's bytes as a blob; its sha256 (hex)."""

    def rewrite(self, path: Path) -> Bounded | None:
        """``bound_file(path)`` in another process; None when that failed."""


def bound_file(path: Path, put: Put) -> Bounded:
    """Bound one conversation file in place (see the module's guarantees); raises what reading or writing raises."""
    return bound_data(path, loads(path.read_bytes()), put)


def bound_data(path: Path, data: Any, put: Put) -> Bounded:
    """``bound_file`` for the file's content already parsed (``data``, changed in place)."""
    table = data.get(TABLE) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return Bounded()
    moved, cut = bound_docs(list(table.values()), put)
    if not moved and not cut:
        return Bounded()
    aside = None
    if cut:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        aside = f"{path.name}.whole-{stamp}"
        os.link(path, path.with_name(aside))
    try:
        atomic_write(path, dumps(data))
    except BaseException:
        if aside is not None:  # the original stays where it was: no second copy of it beside
            path.with_name(aside).unlink(missing_ok=True)
        raise
    return Bounded(moved, cut, aside)


def bound_docs(docs: list[Any], put: Put) -> tuple[int, int]:
    """Bound these documents in place; (texts moved into blobs, texts cut)."""
    moved = cut = 0
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        kind = doc.get("kind")
        if kind == "submitted" and doc.get("whole") is None and _over(doc.get("text")):
            doc["whole"] = _ref(doc["text"], put)
            doc["text"] = preview(doc["text"])
            moved += 1
        elif kind == "tool_result" and doc.get("whole") is None:
            moved += _bound_result(doc, put)
        cut += _cut(doc)
    return moved, cut


def _bound_result(doc: dict[str, Any], put: Put) -> int:
    found = doc.get("content")
    content = found if isinstance(found, str) else ""
    parts = [p for p in doc.get("parts") or () if isinstance(p, dict)]
    others = [p["text"] for p in parts if _over(p.get("text"))]
    if _over(doc.get("structured")):
        others.append(doc["structured"])
    if not others and not is_over(content):
        return 0
    whole = "\n\n".join([content, *(text for text in others if text not in content)])
    doc["whole"] = _ref(whole, put)
    doc["size"] = len(whole)
    doc["content"] = preview(content)
    for part in parts:
        if _over(part.get("text")):
            part["text"] = preview(part["text"])
    if _over(doc.get("structured")):
        doc["structured"] = None  # JSON cut short is no JSON: the whole text holds it
    return 1


def _ref(text: str, put: Put) -> dict[str, Any]:
    data = encoded(text)
    return {"sha256": put(data), "size": len(data), "chars": len(text)}


def _over(value: Any) -> bool:
    return isinstance(value, str) and len(value) * 4 > TEXT_BOUND and is_over(value)


def _cut(value: Any) -> int:
    """Cut every string over the bound left in ``value`` (dicts and lists, in place) to its preview."""
    cut = 0
    if isinstance(value, dict):
        for key, item in value.items():
            if _over(item):
                value[key], cut = preview(item), cut + 1
            elif isinstance(item, dict | list):
                cut += _cut(item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if _over(item):
                value[index], cut = preview(item), cut + 1
            elif isinstance(item, dict | list):
                cut += _cut(item)
    return cut
