"""Reading a data folder at start-up: whatever is damaged is kept aside and reported, opening never raises.

Guarantees:
- ``read_folder`` returns every conversation it can read and the tombstones of deleted ones. It never raises for
  anything found in the folder: an unreadable, truncated, non-UTF-8, wrongly shaped or too deeply nested file,
  a folder or a dangling link named like a conversation file, an index entry without an id, an index of the wrong
  shape, documents the codec rejects, a file name that is not a conversation id.
- Each such finding is one call of ``report(key, message)`` with a readable line. With ``writable`` the damaged
  original is kept aside as ``<name>.corrupt-<time>`` (never deleted) and replaced by what could be read; without
  it (export, a read-only folder) nothing in the folder changes.
- Ids come only from file names that match ``ID_PATTERN`` (letters, digits, ``_`` and ``-``): an id never carries
  quotes, spaces or markup into a page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ledger.documents import from_documents, to_documents
from ledger.events import AnyEvent
from ledger.storage import AtomicJSONStorage, loads, salvage

TABLE = "events"
INDEX_FILE = "index.json"
INDEX_TABLE = "conversations"
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
Report = Callable[[str, str], object]
_READ_ERRORS = (ValueError, KeyError, TypeError, AttributeError, RecursionError)


@dataclass
class Folder:
    """What could be read: events and stored documents per conversation, tombstones, the index's documents."""

    events: dict[str, list[AnyEvent]] = field(default_factory=dict)
    docs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    index: dict[str, Any] = field(default_factory=dict)


def read_folder(data_dir: Path, *, writable: bool, report: Report) -> Folder:
    """Every conversation and tombstone in ``data_dir``; damage is kept aside (when ``writable``) and reported."""
    reader = _Reader(data_dir, writable, report)
    folder = Folder()
    folder.index, folder.deleted = reader.index()
    for path in sorted(data_dir.glob("conv-*.json")):
        cid = path.name.removeprefix("conv-").removesuffix(".json")
        if not ID_PATTERN.fullmatch(cid):
            aside = reader.keep_aside(path)
            report(
                f"name:{path.name}", f"The file {path.name!r} is not named like a conversation: ignored{aside.note}."
            )
            continue
        if cid in folder.deleted:
            continue
        docs = reader.conversation(cid, path)
        if docs is None:
            continue
        events, problems = from_documents(cid, docs)
        events.sort(key=lambda e: e.seq)
        if problems:
            readable = to_documents(events)
            aside = reader.keep_aside(path, replacement=_table(readable))
            report(
                f"codec:{path.name}",
                f"Conversation {cid}: {len(problems)} stored record(s) could not be read and were left out "
                f"({problems[0]}){aside.note}.",
            )
            docs = readable if aside.moved else docs
        folder.events[cid], folder.docs[cid] = events, docs
    return folder


@dataclass(frozen=True, slots=True)
class Aside:
    """Whether a damaged path was moved aside, and the words that say so in a report."""

    moved: bool
    note: str


def is_conversation_id(cid: object) -> bool:
    """Whether ``cid`` can name a conversation file and appear in a page: 1-64 letters, digits, ``_``, ``-``."""
    return isinstance(cid, str) and ID_PATTERN.fullmatch(cid) is not None


class _Reader:
    def __init__(self, data_dir: Path, writable: bool, report: Report) -> None:
        self.data_dir, self.writable, self.report = data_dir, writable, report

    def index(self) -> tuple[dict[str, Any], set[str]]:
        """The index's documents and the ids of deleted conversations; a damaged index is rebuilt from the files."""
        path = self.data_dir / INDEX_FILE
        try:
            data = loads(path.read_bytes()) if path.exists() else {}
            table = data.get(INDEX_TABLE, {}) if isinstance(data, dict) else None
            if not isinstance(table, dict) or not all(isinstance(doc, dict) for doc in table.values()):
                raise TypeError(f"expected an object of {INDEX_TABLE}, got {type(table or data).__name__}")
        except (OSError, *_READ_ERRORS) as exc:
            aside = self.keep_aside(path)
            rebuilt = {INDEX_TABLE: self._rebuilt_index()}
            if aside.moved:
                self._write(path, rebuilt)
            action = "it was rebuilt from the files" if aside.moved else "it is read as if empty"
            self.report("index", f"The conversation index is damaged ({_why(exc)}); {action}{aside.note}.")
            return rebuilt, set()
        good = {key: doc for key, doc in table.items() if is_conversation_id(doc.get("id"))}
        cleaned = {**data, INDEX_TABLE: good}
        if len(good) < len(table):
            bad = ", ".join(sorted(set(table) - set(good)))
            aside = self.keep_aside(path, replacement=cleaned)
            self.report("index-entries", f"The conversation index has entries without a valid id ({bad}){aside.note}.")
        return cleaned, {str(doc["id"]) for doc in good.values() if doc.get("deleted")}

    def conversation(self, cid: str, path: Path) -> list[dict[str, Any]] | None:
        """The stored documents of one file, in order; ``None`` when the path is not a readable file."""
        try:
            raw = path.read_bytes()
        except OSError as exc:
            aside = self.keep_aside(path)
            self.report(f"read:{path.name}", f"Conversation {cid}: its file cannot be read ({_why(exc)}){aside.note}.")
            return None
        try:
            data = loads(raw.decode("utf-8"))
            table = data[TABLE]
            docs = [table[k] for k in sorted(table, key=int)]
            if not all(isinstance(doc, dict) for doc in docs):
                raise TypeError("a stored record is not an object")
            return docs
        except _READ_ERRORS as exc:
            docs = salvage(raw.decode("utf-8", errors="replace"))[1]
            aside = self.keep_aside(path, replacement=_table(docs))
            found = f"({_why(exc)}); {'recovered' if aside.moved else 'read'} {len(docs)} stored record(s) before"
            message = f"its file {'was' if aside.moved else 'is'} damaged {found} the damage"
            self.report(f"damaged:{path.name}", f"Conversation {cid}: {message}{aside.note}.")
            return docs

    def keep_aside(self, path: Path, replacement: dict[str, Any] | None = None) -> Aside:
        """Move ``path`` aside and write ``replacement`` in its place (only when writable)."""
        if not self.writable or not (path.exists() or path.is_symlink()):
            return Aside(moved=False, note="")
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        kept = path.with_name(f"{path.name}.corrupt-{stamp}")
        try:
            path.replace(kept)
        except OSError as exc:
            return Aside(moved=False, note=f" (it could not be kept aside: {_why(exc)})")
        if replacement is not None:
            self._write(path, replacement)
        return Aside(moved=True, note=f". The original is kept at {kept.name}")

    def _write(self, path: Path, data: dict[str, Any]) -> None:
        try:
            AtomicJSONStorage(path).write(data)
        except OSError as exc:
            self.report(f"write:{path.name}", f"{path.name} could not be rewritten ({_why(exc)}).")

    def _rebuilt_index(self) -> dict[str, Any]:
        names = sorted(p.name for p in self.data_dir.glob("conv-*.json") if p.is_file())
        cids = [n.removeprefix("conv-").removesuffix(".json") for n in names]
        valid = [(cid, name) for cid, name in zip(cids, names, strict=True) if is_conversation_id(cid)]
        return {str(n): {"id": cid, "file": name, "deleted": False} for n, (cid, name) in enumerate(valid, 1)}


def _table(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return {TABLE: {str(i): doc for i, doc in enumerate(docs, start=1)}}


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or type(exc).__name__
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return type(exc).__name__
