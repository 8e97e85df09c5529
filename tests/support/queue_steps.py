"""The message queue's steps in the reducer's random sessions (``tests.support.session_steps``): queueing,
editing and removing a message; sending one is a ``submit`` step carrying a queue id (``send_queued``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ledger.events.core import AnyEvent, Attachment
from ledger.events.queue import MessageQueued, QueuedEdited, QueuedRemoved

QUEUE_STEPS = {
    "queue": st.tuples(st.just("queue"), st.integers(0, 3)),
    "queue_edit": st.tuples(st.just("queue_edit"), st.integers(0, 3)),
    "queue_remove": st.tuples(st.just("queue_remove"), st.integers(0, 3)),
    "send_queued": st.tuples(st.just("send_queued"), st.integers(0, 3)),
}
FILE = Attachment(sha256="0" * 64, name="notes.txt", media_type="text/plain", size=3)


def queue_event(step: tuple[Any, ...], base: dict[str, Any]) -> AnyEvent:
    """The event of a ``queue``, ``queue_edit`` or ``queue_remove`` step (queue ids ``q0``..``q3`` collide often)."""
    kind, queue_id = step[0], f"q{step[1]}"
    if kind == "queue":
        files = (FILE,) if step[1] % 2 else ()
        return MessageQueued(**base, queue_id=queue_id, text=f"queued {base['seq']}", attachments=files, model="x")
    if kind == "queue_edit":
        return QueuedEdited(**base, queue_id=queue_id, text=f"edited {base['seq']}")
    return QueuedRemoved(**base, queue_id=queue_id)
