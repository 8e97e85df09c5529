"""An admin reading someone else's conversation (team mode with ``--admin-can-read``), always on the record.

Guarantees:
- ``read_as_admin`` appends ``read_by`` (the admin as its actor) to the conversation before it returns anything of
  it: a read that cannot be recorded (the store refuses it) raises ``StoreError`` and shows nothing. Its owner sees
  every such read in the audit panel (``ledger.state.ConversationState.reads``); the chat's last activity, its
  place in the list and what the model is sent do not change. While another instance writes the chat (an answer
  streaming there) the read cannot be recorded: ``StoreError`` (``ConversationBusyError``), nothing shown.
- A conversation that does not exist, or was deleted, is None. An admin's own conversation is theirs: no record.
- ``chats_of`` lists a person's conversations without their titles (when, how many messages): choosing one to
  open is the read, and is recorded as one.
- Nothing is kept in memory for it: the conversation is dropped again once saved, unless a page shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.commands.engine import Engine
from engine.people import Viewer
from ledger.errors import StoreError
from ledger.events import ReadBy
from ledger.state import ConversationState


@dataclass(frozen=True, slots=True)
class ChatLine:
    """One conversation as the admin's list shows it: never its title or text."""

    conversation_id: str
    created_ts: str
    updated_ts: str


async def read_as_admin(engine: Engine, cid: str, admin: str, name: str) -> ConversationState | None:
    """The conversation ``cid`` for the admin ``admin`` (named ``name``), its read recorded first."""
    conv = await engine.load(cid)
    if conv is None or conv.owner == admin:
        return conv
    reason = await engine.read.saving_fails()
    if reason is not None:
        raise StoreError(reason)
    await engine.peers.writable(cid)  # another instance may still be writing its last events
    engine.read.append(ReadBy(conversation_id=cid, actor=admin, name=name))  # urgent: written at once (``FLAGS``)
    saved = await engine.flush()
    engine.presence.release(cid)
    if not saved:
        raise StoreError(engine.health().saving_fails or "the read was not saved")
    return engine.conversation(cid)


def chats_of(engine: Engine, person: str) -> list[ChatLine]:
    """``person``'s live conversations, newest activity first."""
    summaries = engine.summaries(viewer=Viewer(team=True, person=person))
    return [ChatLine(s.conversation_id, s.created_ts, s.when) for s in summaries]
