"""What the conversation list (and restart recovery) needs of a conversation, without its events.

Guarantees:
- A ``ConversationSummary`` is small and immutable: id, title, created/updated times, the attempts still open
  (streaming or closing: what restart recovery must finish; sorted), the last seq, whether it was deleted, and
  (team mode) whose it is.
- ``summarize(summary, event)`` is pure and folds one event in; folding a conversation's events gives the same
  title, times, last seq and open attempts as ``summary_of(replay(events))`` (a property test holds them equal):
  a store keeps it up to date on append, so the list and recovery never need the events.
- One end per attempt (``ledger.ends``): an attempt leaves the open ones at its first end (``is_terminal``) or
  ``persisted``, and a late event (anything of it after its end) never brings it back: only ``started`` opens one.
- ``as_doc``/``from_doc`` are its form in a store's index; ``from_doc`` never raises (a damaged entry reads as
  ``None``: the store then reads the conversation's events to rebuild it).
- ``newest_first`` orders by last activity, newest first (then creation).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ledger.ends import is_terminal
from ledger.events import (
    AnyEvent,
    Cancelled,
    Created,
    Deleted,
    Done,
    Failed,
    Handed,
    Persisted,
    ReadBy,
    Recovered,
    Renamed,
    ShareCreated,
    ShareOpened,
    ShareRevoked,
    ShareUpdated,
    Started,
    Submitted,
    Titled,
    retitled,
)
from ledger.state import ConversationState

TITLE_CHARS = 60


class ConversationSummary(NamedTuple):
    conversation_id: str
    title: str = ""
    created_ts: str = ""
    updated_ts: str = ""
    open_attempts: tuple[str, ...] = ()
    last_seq: int = 0
    deleted: bool = False
    owner: str | None = None  # team mode: the person it belongs to (``ledger.state.ConversationState.owner``)

    @property
    def when(self) -> str:
        """The time the list groups and sorts by: the last activity, else the creation."""
        return self.updated_ts or self.created_ts


def summarize(summary: ConversationSummary | None, event: AnyEvent) -> ConversationSummary:
    """The summary after ``event`` (``None``: the conversation's first event)."""
    if summary is None:
        summary = ConversationSummary(event.conversation_id, created_ts=event.ts)
    elif summary.deleted:
        return summary
    title, created, open_attempts, owner = summary.title, summary.created_ts, summary.open_attempts, summary.owner
    match event:
        case Created():
            title, created = event.title or title, event.ts
            owner = event.owner if event.owner is not None else owner
        case Handed():
            owner = event.owner if owner is None else owner
        case Renamed():
            title = event.title
        case Titled():
            title = retitled(title, event)
        case Submitted():
            title = title or first_line_title(event.text)
        case Started():
            open_attempts = tuple(sorted({*open_attempts, event.attempt_id}))
        case Done() | Cancelled() | Recovered() | Failed() | Persisted():
            if (closed := closes(event)) is not None:
                open_attempts = tuple(a for a in open_attempts if a != closed)
        case ReadBy() | ShareCreated() | ShareUpdated() | ShareRevoked() | ShareOpened():  # not the chat's activity
            return summary._replace(last_seq=max(summary.last_seq, event.seq))
        case Deleted():
            return summary._replace(deleted=True, open_attempts=(), last_seq=event.seq, updated_ts=event.ts)
    return summary._replace(
        title=title,
        created_ts=created,
        updated_ts=event.ts or summary.updated_ts,
        open_attempts=open_attempts,
        last_seq=max(summary.last_seq, event.seq),
        owner=owner,
    )


def closes(event: AnyEvent) -> str | None:
    """The attempt ``event`` takes out of a summary's open ones (its first end, or its ``persisted``), if any."""
    match event:
        case Done() | Cancelled() | Recovered() | Failed() | Persisted():
            return event.attempt_id if is_terminal(event) or isinstance(event, Persisted) else None
        case _:
            return None


def summary_of(conv: ConversationState) -> ConversationSummary:
    """The summary of a replayed conversation."""
    live = tuple(sorted(a.attempt_id for a in conv.attempts.values() if a.is_live))
    return ConversationSummary(
        conv.conversation_id,
        conv.title,
        conv.created_ts,
        conv.updated_ts,
        live,
        conv.last_seq,
        conv.deleted,
        conv.owner,
    )


def first_line_title(text: str) -> str:
    """The title a conversation gets from its first message: the text on one line, cut to ``TITLE_CHARS``."""
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def newest_first(summaries: Iterable[ConversationSummary]) -> list[ConversationSummary]:
    return sorted(summaries, key=lambda s: (s.updated_ts, s.created_ts), reverse=True)


def as_doc(summary: ConversationSummary) -> dict[str, Any]:
    return {
        "title": summary.title,
        "created": summary.created_ts,
        "updated": summary.updated_ts,
        "open": list(summary.open_attempts),
        "last_seq": summary.last_seq,
        **({"owner": summary.owner} if summary.owner is not None else {}),
    }


def from_doc(cid: str, doc: Mapping[str, Any]) -> ConversationSummary | None:
    """The summary an index entry holds; ``None`` when it holds none (an older index) or a damaged one."""
    fields = (doc.get("title"), doc.get("created"), doc.get("updated"), doc.get("open"), doc.get("last_seq"))
    title, created, updated, open_attempts, last_seq = fields
    if not (isinstance(title, str) and isinstance(created, str) and isinstance(updated, str)):
        return None
    if not isinstance(open_attempts, list) or not all(isinstance(a, str) for a in open_attempts):
        return None
    if not isinstance(last_seq, int) or isinstance(last_seq, bool):
        return None
    owner = doc.get("owner")
    if owner is not None and not isinstance(owner, str):
        return None
    return ConversationSummary(
        cid, title, created, updated, tuple(open_attempts), last_seq, bool(doc.get("deleted")), owner
    )
