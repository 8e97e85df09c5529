"""The conversation's own events: made, handed to its owner, read by an admin, renamed, deleted, and which version
and attempt a reader follows.

Guarantees: frozen values; each declares its ``KIND`` and ``FLAGS``; re-exported by ``ledger.events.core`` (import them
from there). Ids and timestamps are never generated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ledger.events.values import AttemptUsage, Event, Flags

__all__ = [
    "Attached",
    "Branched",
    "Created",
    "Deleted",
    "Detached",
    "Handed",
    "ReadBy",
    "Renamed",
    "Selected",
    "VersionSelected",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class Created(Event):
    KIND: ClassVar[str] = "created"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=False, listed=True, late_phase=False)
    title: str = ""
    branched_from: str | None = None  # the conversation this one was branched from
    branched_at: str | None = None  # the message of that conversation it was branched at
    owner: str | None = None  # team mode: the person it belongs to (``local:<name>``); None in personal mode
    cwd: str | None = None  # an editor's session (``main.py acp``): the working directory it gave at ``session/new``


@dataclass(frozen=True, kw_only=True, slots=True)
class Handed(Event):
    """A conversation nobody owned (made in personal mode) was handed to a person when the data moved to team mode
    (``main.py migrate --owner NAME``). It never takes a conversation from the person who owns it."""

    KIND: ClassVar[str] = "handed"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=False, listed=True, late_phase=False)
    owner: str
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class ReadBy(Event):
    """An admin read this conversation (team mode with ``--admin-can-read``): written before anything of it is
    shown to them, so its owner sees every such read in the audit panel. It changes nothing else: not the list's
    order, not what the model is sent."""

    KIND: ClassVar[str] = "read_by"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=True, listed=False, late_phase=False)
    actor: str | None = None  # the admin who read it (team mode's person id)
    name: str = ""  # how that admin was named then (an OpenID Connect person id says nothing to a reader)


@dataclass(frozen=True, kw_only=True, slots=True)
class Renamed(Event):
    KIND: ClassVar[str] = "renamed"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=False, listed=True, late_phase=False)
    title: str
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class Selected(Event):
    KIND: ClassVar[str] = "selected"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=True, listed=False, late_phase=False)
    message_id: str
    attempt_id: str
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class VersionSelected(Event):
    """The user chose which version of a user message (an edit, or the original) the conversation follows."""

    KIND: ClassVar[str] = "version_selected"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=False, listed=False, late_phase=False)
    message_id: str
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class Branched(Event):
    """A new conversation was branched from this one at ``message_id``."""

    KIND: ClassVar[str] = "branched"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=False, listed=False, late_phase=False)
    message_id: str
    new_conversation_id: str
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)


@dataclass(frozen=True, kw_only=True, slots=True)
class Detached(Event):
    KIND: ClassVar[str] = "detached"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Attached(Event):
    KIND: ClassVar[str] = "attached"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=False, prompt=False, listed=False, late_phase=False)
    attempt_id: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Deleted(Event):
    """The conversation was deleted: its other events go (the stores keep only this one, with the tombstone), but
    what it spent stays: ``usage`` is every attempt's use folded at that moment (``ledger.usage.usage_of``) and
    ``owner`` whose it was, so spend limits and the usage page still count it. A ``deleted`` written before these
    fields has neither (nothing of it is counted)."""

    KIND: ClassVar[str] = "deleted"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=True, prompt=True, listed=True, late_phase=False)
    actor: str | None = None  # team mode: who did it (stamped on append from ``engine.people.acting``)
    owner: str | None = None  # team mode: the conversation's owner (whose spend ``usage`` is); None in personal mode
    usage: tuple[AttemptUsage, ...] = ()
