"""The after-end reactions, as policies (the eventsourcing library's ``policy(event)``): each a small class with
one ``ended`` method, run by the door (``engine.attempts``) under the conversation's lock, in the order
``declared`` gives, a raising one logged and skipped.

Guarantees: ``declared`` is the one place that says which reactions exist and in which order: what follows a
compaction first (so the answer it made room for starts before anything else is sent), then the queue's next
message, then the chat's title (never while something is queued), then letting an unwatched conversation leave
memory.
"""

from __future__ import annotations

from engine.policies.compaction import AfterCompaction
from engine.policies.presence import DropUnwatched, drop, drop_when_saved
from engine.policies.queue import Ids, SendQueued, existing, provider_of, require_saving, send_queued
from engine.policies.titles import Titles

Declared = tuple[AfterCompaction, SendQueued, Titles, DropUnwatched]


def declared() -> Declared:
    """A new set of the reactions, in the order they run."""
    return AfterCompaction(), SendQueued(), Titles(), DropUnwatched()


__all__ = [
    "AfterCompaction",
    "Declared",
    "DropUnwatched",
    "Ids",
    "SendQueued",
    "Titles",
    "declared",
    "drop",
    "drop_when_saved",
    "existing",
    "provider_of",
    "require_saving",
    "send_queued",
]
