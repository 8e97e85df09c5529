"""The kind a generated chat title is recorded with (docs/ledger.md, "Titles").

Guarantees:
- ``Titled`` is immutable like every event (``ledger.events.values.Event``) and belongs to the one list of kinds in
  ``ledger.events.core`` (``AnyEvent``). It follows the end of the ``title`` attempt it came from (``from_attempt``,
  ``ledger.titles``); the title itself was cleaned there (one line, no quotes, no tags, at most ``TITLE_CHARS``).
- ``retitled`` is the one rule, shared by the reducer and the conversation summary: a generated title replaces the
  title only while that is still the one it was made to replace (``replaces``); a rename (or any other title
  change) in between wins, whenever it came.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ledger.events.values import Event, Flags


@dataclass(frozen=True, kw_only=True, slots=True)
class Titled(Event):
    """The model named the chat: ``title`` replaces ``replaces`` (the title it had when the title was asked for)."""

    KIND: ClassVar[str] = "titled"
    FLAGS: ClassVar[Flags] = Flags(attempt=False, urgent=False, prompt=True, listed=True, late_phase=False)
    title: str
    replaces: str
    from_attempt: str  # the ``title`` attempt whose text it is


def retitled(title: str, event: Titled) -> str:
    """The chat's title after ``event``: the generated one, unless the title changed since it was asked for."""
    return event.title if event.title and title == event.replaces else title
