"""Reading a data folder at start-up: whatever is damaged is kept aside and reported, opening never raises.

Guarantees:
- A conversation is its compacted file (``conv-<id>.json``) and the log of the batches written after it
  (``conv-<id>.log``, ``store.tinydb.logfile``): the log is read first, then the file, and its records replayed
  after the file's documents. A log's torn or damaged tail is cut back to its last complete record, the cut part
  kept aside and reported (``store.tinydb.aside.cut_log``). A folder written before logs existed has compacted
  files only: they are read as they are, and the writer appends a log beside each from then on.
- ``read_index`` reads the index only: per live conversation its summary (``ledger.summary``), and the tombstones
  with the ``deleted`` event each keeps (``graves``: what the conversation spent; none in an older index).
  Entries without a summary (an index written before summaries) and conversation files the index does not list
  are read once, their summaries rebuilt from their events and the index rewritten (when ``writable``): an old
  folder is upgraded at its first open. Conversation files are otherwise read one at a time, when opened
  (``read_conversation``), with the same damage handling.
- ``read_folder`` returns every conversation it can read and the tombstones of deleted ones. It never raises for
  anything found in the folder: an unreadable, truncated, non-UTF-8, wrongly shaped or too deeply nested file,
  a folder or a dangling link named like a conversation file, an index entry without an id, an index of the wrong
  shape, documents the codec rejects, a file name that is not a conversation id.
- Each such finding is one call of ``report(key, message)`` with a readable line. With ``writable`` the damaged
  original is kept aside as ``<name>.corrupt-<time>`` (never deleted) and replaced by what could be read; without
  it (export, a read-only folder) nothing in the folder changes.
- With a ``bounding`` (``store.tinydb.bounding``) and ``writable``, a conversation file is bounded before its
  documents are used: one over ``OVERSIZE_FILE`` by another process before this one parses it, a smaller one over
  ``TEXT_BOUND`` here; texts cut there are reported (the original is kept beside the file).
- Ids come only from file names that match ``ID_PATTERN`` (letters, digits, ``_`` and ``-``): an id never carries
  quotes, spaces or markup into a page.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger.bounds import TEXT_BOUND
from ledger.events import AnyEvent, Deleted
from ledger.summary import ConversationSummary, from_doc
from store.memory import summary_of_events
from store.tinydb.aside import Aside, cut_log, keep_aside, why
from store.tinydb.bounding import OVERSIZE_FILE, Bounded, Bounding, bound_data
from store.tinydb.documents import from_documents, last_seq, to_documents
from store.tinydb.entries import INDEX_TABLE, graves_of, index_docs
from store.tinydb.logfile import as_table, log_path, read_log, table_docs
from store.tinydb.records import scan
from store.tinydb.storage import AtomicJSONStorage, loads, salvage

INDEX_FILE = "index.json"
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
Report = Callable[[str, str], object]
_READ_ERRORS = (ValueError, KeyError, TypeError, AttributeError, RecursionError)


@dataclass
class Folder:
    """What could be read: events per conversation, tombstones, the index's documents."""

    events: dict[str, list[AnyEvent]] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    index: dict[str, Any] = field(default_factory=dict)
    graves: dict[str, Deleted] = field(default_factory=dict)


@dataclass
class Index:
    """What the index says: the index's documents, live conversations' summaries, tombstones."""

    docs: dict[str, Any] = field(default_factory=dict)
    summaries: dict[str, ConversationSummary] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    graves: dict[str, Deleted] = field(default_factory=dict)


def read_index(data_dir: Path, *, writable: bool, report: Report, bounding: Bounding | None = None) -> Index:
    """The summaries and tombstones of ``data_dir``, reading conversation files only to upgrade an older index."""
    reader = _Reader(data_dir, writable, report, bounding)
    index = Index()
    index.docs, index.deleted = reader.index()
    index.graves = graves_of(index.docs.get(INDEX_TABLE, {}), report)
    listed: dict[str, ConversationSummary | None] = {}
    for doc in index.docs.get(INDEX_TABLE, {}).values():
        cid = str(doc["id"])
        if cid not in index.deleted:
            listed[cid] = from_doc(cid, doc)
    for cid in _file_ids(data_dir, reader):
        if cid not in index.deleted:
            listed.setdefault(cid, None)
    upgraded = False
    for cid, summary in listed.items():
        if summary is None:
            read = read_conversation(data_dir, cid, writable=writable, report=report, bounding=bounding)
            if read is None:
                continue
            summary, upgraded = summary_of_events(cid, read[0]), True
        index.summaries[cid] = summary
    if upgraded:
        index.docs = index_docs(index.summaries, index.deleted, index.docs)
        if writable:
            reader.write(data_dir / INDEX_FILE, index.docs)
    return index


def read_conversation(
    data_dir: Path, cid: str, *, writable: bool, report: Report, bounding: Bounding | None = None
) -> tuple[list[AnyEvent], int] | None:
    """One conversation's events and where its log's good records end; damage is kept aside (when ``writable``)
    and reported; ``None`` when its files are not there or cannot be read."""
    path = data_dir / f"conv-{cid}.json"
    if not (path.exists() or path.is_symlink() or log_path(path).exists()):
        return None
    return _conversation(_Reader(data_dir, writable, report, bounding), cid, path)


def _file_ids(data_dir: Path, reader: _Reader) -> list[str]:
    """The ids of the conversation files in the folder; a file not named like one is kept aside and reported."""
    found = []
    for path in sorted([*data_dir.glob("conv-*.json"), *data_dir.glob("conv-*.log")]):
        cid = path.name.removeprefix("conv-").removesuffix(path.suffix)
        if ID_PATTERN.fullmatch(cid):
            found.append(cid)
            continue
        aside = reader.keep_aside(path)
        reader.report(
            f"name:{path.name}", f"The file {path.name!r} is not named like a conversation: ignored{aside.note}."
        )
    return list(dict.fromkeys(found))


def read_folder(data_dir: Path, *, writable: bool, report: Report) -> Folder:
    """Every conversation and tombstone in ``data_dir``; damage is kept aside (when ``writable``) and reported."""
    reader = _Reader(data_dir, writable, report)
    folder = Folder()
    folder.index, folder.deleted = reader.index()
    folder.graves = graves_of(folder.index.get(INDEX_TABLE, {}), report)
    for cid in _file_ids(data_dir, reader):
        if cid in folder.deleted:
            continue
        read = _conversation(reader, cid, data_dir / f"conv-{cid}.json")
        if read is not None:
            folder.events[cid] = read[0]
    return folder


def _conversation(reader: _Reader, cid: str, path: Path) -> tuple[list[AnyEvent], int] | None:
    read = reader.conversation(cid, path)
    if read is None:
        return None
    docs, end = read
    events, problems = from_documents(cid, docs)
    events.sort(key=lambda e: e.seq)
    if problems:
        readable = to_documents(events)
        aside = reader.keep_aside(path, replacement=as_table(readable))
        reader.report(
            f"codec:{path.name}",
            f"Conversation {cid}: {len(problems)} stored record(s) could not be read and were left out "
            f"({problems[0]}){aside.note}.",
        )
    return events, end


def is_conversation_id(cid: object) -> bool:
    """Whether ``cid`` can name a conversation file and appear in a page: 1-64 letters, digits, ``_``, ``-``."""
    return isinstance(cid, str) and ID_PATTERN.fullmatch(cid) is not None


class _Reader:
    def __init__(self, data_dir: Path, writable: bool, report: Report, bounding: Bounding | None = None) -> None:
        self.data_dir, self.writable, self.report = data_dir, writable, report
        self.bounding = bounding if writable else None

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
                self.write(path, rebuilt)
            action = "it was rebuilt from the files" if aside.moved else "it is read as if empty"
            self.report("index", f"The conversation index is damaged ({why(exc)}); {action}{aside.note}.")
            return rebuilt, set()
        good = {key: doc for key, doc in table.items() if is_conversation_id(doc.get("id"))}
        cleaned = {**data, INDEX_TABLE: good}
        if len(good) < len(table):
            bad = ", ".join(sorted(set(table) - set(good)))
            aside = self.keep_aside(path, replacement=cleaned)
            self.report("index-entries", f"The conversation index has entries without a valid id ({bad}){aside.note}.")
        return cleaned, {str(doc["id"]) for doc in good.values() if doc.get("deleted")}

    def conversation(self, cid: str, path: Path) -> tuple[list[dict[str, Any]], int] | None:
        """The stored documents of one conversation, in order, and where its log's good records end; ``None``
        when neither its compacted file nor its log can be read."""
        self.bound_aside(cid, path)
        try:
            tail = read_log(path)  # before the compacted file: see ``store.tinydb.logfile``
        except OSError as exc:
            tail = b""
            self.report(f"read:{path.name}.log", f"Conversation {cid}: its log cannot be read ({why(exc)}).")
        docs = self.compacted(cid, path) if path.exists() or path.is_symlink() else []
        if docs is None and not tail:
            return None
        docs = docs or []
        found = scan(tail, after=last_seq(docs))
        if found.damaged:
            cut_log(cid, path, found, writable=self.writable, report=self.report)
        return docs + found.docs, found.end

    def compacted(self, cid: str, path: Path) -> list[dict[str, Any]] | None:
        """The stored documents of one compacted file, in order; ``None`` when the path is not a readable file."""
        try:
            raw = path.read_bytes()
        except OSError as exc:
            aside = self.keep_aside(path)
            self.report(f"read:{path.name}", f"Conversation {cid}: its file cannot be read ({why(exc)}){aside.note}.")
            return None
        try:
            docs = table_docs(loads(raw.decode("utf-8")))
            if self.bounding is not None and len(raw) > TEXT_BOUND:  # bounded apart: a failed rewrite changes nothing
                apart = loads(raw.decode("utf-8"))  # of what is read (it is written back by the next batch)
                if self.bounded(cid, path, lambda: bound_data(path, apart, self.bounding.put)):  # type: ignore[union-attr]
                    docs = table_docs(apart)
            return docs
        except _READ_ERRORS as exc:
            docs = salvage(raw.decode("utf-8", errors="replace"))[1]
            aside = self.keep_aside(path, replacement=as_table(docs))
            found = f"({why(exc)}); {'recovered' if aside.moved else 'read'} {len(docs)} stored record(s) before"
            message = f"its file {'was' if aside.moved else 'is'} damaged {found} the damage"
            self.report(f"damaged:{path.name}", f"Conversation {cid}: {message}{aside.note}.")
            return docs

    def bound_aside(self, cid: str, path: Path) -> None:
        """A file over ``OVERSIZE_FILE`` is bounded by another process (``Bounding.rewrite``) before it is read."""
        try:
            big = self.bounding is not None and path.is_file() and path.stat().st_size > OVERSIZE_FILE
        except OSError:
            return
        if big:
            self.bounded(cid, path, lambda: self.bounding.rewrite(path))  # type: ignore[union-attr]

    def bounded(self, cid: str, path: Path, bound: Callable[[], Bounded | None]) -> bool:
        """Run ``bound``; whether it did its work (a failure is reported, never raised)."""
        try:
            done = bound()
        except OSError as exc:
            done, cause = None, why(exc)
        else:
            cause = "the process that does it failed"
        if done is None:
            self.report(f"bound:{path.name}", f"Conversation {cid}: its long texts could not be moved aside ({cause}).")
        elif done.cut:
            self.report(
                f"bound:{path.name}",
                f"Conversation {cid}: {done.cut} text(s) over {TEXT_BOUND // (1024 * 1024)} MB were cut to their "
                f"first part; the original is kept at {done.aside}.",
            )
        return done is not None

    def keep_aside(self, path: Path, replacement: dict[str, Any] | None = None) -> Aside:
        """Move ``path`` aside and write ``replacement`` in its place (only when writable)."""
        return keep_aside(path, writable=self.writable, write=self.write, replacement=replacement)

    def write(self, path: Path, data: dict[str, Any]) -> None:
        try:
            AtomicJSONStorage(path).write(data)
        except OSError as exc:
            self.report(f"write:{path.name}", f"{path.name} could not be rewritten ({why(exc)}).")

    def _rebuilt_index(self) -> dict[str, Any]:
        names = sorted(p.name for p in self.data_dir.glob("conv-*.json") if p.is_file())
        cids = [n.removeprefix("conv-").removesuffix(".json") for n in names]
        valid = [(cid, name) for cid, name in zip(cids, names, strict=True) if is_conversation_id(cid)]
        return {str(n): {"id": cid, "file": name, "deleted": False} for n, (cid, name) in enumerate(valid, 1)}
