"""Decisions: what a command appends to one conversation, or the reason it is refused.

Guarantees:
- Pure: a decision reads the conversation's state and its arguments only; ids are passed in, no clock is read
  and nothing is appended here. The caller appends exactly the events returned, in order.
- A refused command raises ``InputRejected`` with one sentence the user can act on, and no event is returned; each
  rule is written here once (the engine uses these, ``engine.commands.engine``), so it is tested without a provider.
- Send and Retry return the ``started`` of the new attempt with the event that asks for it (``submitted`` or
  ``retrying``); both are refused while an answer streams (the caller says whether one does: here or elsewhere).
"""

from __future__ import annotations

from dataclasses import dataclass

from ledger.errors import StateError
from ledger.events import (
    Attachment,
    Branched,
    Renamed,
    Retrying,
    Selected,
    Started,
    Submitted,
    Trigger,
    VersionSelected,
)
from ledger.state import ConversationState
from ledger.tree import chain_before, selected_path, tip

STILL_STREAMING = "An answer is still streaming. Stop it first."
TITLE_CHARS = 120


class InputRejected(StateError):
    """The user's input cannot be carried out as it is; the message says why (the text is not lost)."""


@dataclass(frozen=True, slots=True)
class NewAttempt:
    """Ids a new attempt is given by whoever appends: the attempt, and the model that answers."""

    attempt_id: str
    model: str
    preset: tuple[str, int] | None = None  # the agent preset (id, version) it runs with


@dataclass(frozen=True, slots=True)
class Branching:
    """A new chat from a branch: the (message, attempt) pairs to copy, root first; its title; the draft to edit
    (the text of the user message branched from, else None); and the ``branched`` recorded in the old chat."""

    chain: tuple[tuple[str, str | None], ...]
    title: str
    draft: str | None
    branched: Branched


def existing(conv: ConversationState | None) -> ConversationState:
    if conv is None:
        raise InputRejected("This conversation no longer exists.")
    return conv


def check_text(text: str, limit: int, *, files: bool = False) -> None:
    """A message needs text or files (``files``: it carries some), and at most ``limit`` characters."""
    if not text.strip() and not files:
        raise InputRejected("Type a message first.")
    if len(text) > limit:
        raise InputRejected(
            f"This message has {len(text):,} characters; the limit is {limit:,}. Shorten it and send again."
        )


def rename(cid: str, title: str) -> Renamed:
    """``title`` as it will show (without invisible characters): empty is refused, long is cut."""
    if not title:
        raise InputRejected("A conversation needs a name.")
    return Renamed(conversation_id=cid, title=title[:TITLE_CHARS])


def editable(conv: ConversationState, message_id: str) -> None:
    message = conv.messages.get(message_id)
    if message is None or message.role != "user":
        raise InputRejected("Only your own messages can be edited.")


def send(
    conv: ConversationState,
    text: str,
    new: NewAttempt,
    *,
    user_id: str,
    answer_id: str,
    edit_of: str | None = None,
    streaming: bool,
    attachments: tuple[Attachment, ...] | None = None,
    actor: str | None = None,
) -> tuple[Submitted, Started]:
    """A user message after the shown path's last answer (or a new version of ``edit_of``), and its answer.
    ``attachments``: its files; None keeps those of the message edited (none for a new message)."""
    if streaming:
        raise InputRejected(STILL_STREAMING)
    cid, turn = conv.conversation_id, conv.turn + 1
    edited = conv.messages.get(edit_of or "")
    parent = edited.parent if edited is not None else tip(conv)
    if attachments is None:
        attachments = edited.attachments if edited is not None else ()
    submitted = Submitted(
        conversation_id=cid,
        message_id=user_id,
        turn=turn,
        text=text,
        parent=parent,
        edit_of=edit_of,
        attachments=attachments,
        actor=actor,
    )
    return submitted, _started(cid, new, answer_id, user_id, turn, "submit")


def retry_target(conv: ConversationState, message_id: str | None) -> str:
    """The answer to retry: ``message_id``, or the last answer of the path shown."""
    answers = [m for m in selected_path(conv) if conv.messages[m].role == "assistant"]
    target = message_id or (answers[-1] if answers else None)
    if target is None or target not in conv.messages or conv.messages[target].role != "assistant":
        raise InputRejected("There is no answer to retry.")
    return target


def retry(conv: ConversationState, target: str, new: NewAttempt, *, streaming: bool) -> tuple[Retrying, Started]:
    """A new attempt for the answer ``target`` (later turns stay with the old attempt, in their branch)."""
    if streaming:
        raise InputRejected(STILL_STREAMING)
    message = conv.messages[target]
    retrying = Retrying(
        conversation_id=conv.conversation_id,
        message_id=message.message_id,
        previous_attempt_id=message.selected_attempt_id or message.attempt_ids[-1],
        attempt_id=new.attempt_id,
        why="user",
    )
    user_id = message.user_message_id or ""
    return retrying, _started(conv.conversation_id, new, message.message_id, user_id, message.turn, "retry")


def select_version(conv: ConversationState, message_id: str) -> tuple[VersionSelected, ...]:
    """Follow another version (the original or an edit) of a user message; nothing if it is followed already."""
    message = conv.messages.get(message_id)
    if message is None or message.role != "user":
        raise InputRejected("That message does not exist.")
    if conv.live_attempt() is not None:
        raise InputRejected("Wait for the answer to finish (or stop it) before switching versions.")
    if conv.chosen.get(message.parent or "") == message_id:
        return ()
    return (VersionSelected(conversation_id=conv.conversation_id, message_id=message_id),)


def select_attempt(conv: ConversationState, message_id: str, attempt_id: str) -> tuple[Selected, ...]:
    """Show another attempt of an answer; nothing if it is shown already."""
    message = conv.messages.get(message_id)
    if message is None or attempt_id not in message.attempt_ids:
        raise InputRejected("That attempt does not exist.")
    if conv.live_attempt() is not None:  # switching could hide the streaming answer from the path shown
        raise InputRejected("Wait for the answer to finish (or stop it) before switching attempts.")
    if message.selected_attempt_id == attempt_id:
        return ()
    return (Selected(conversation_id=conv.conversation_id, message_id=message_id, attempt_id=attempt_id),)


def branch(conv: ConversationState, message_id: str, new_cid: str) -> Branching:
    """The shown branch up to and including ``message_id`` (from a user message: up to its parent, its text
    returned as the draft), to be copied into the new chat ``new_cid``."""
    message = conv.messages.get(message_id)
    if message is None:
        raise InputRejected("That message does not exist.")
    chain = chain_before(conv, message_id)
    if message.role == "assistant":
        chain.append((message_id, message.selected_attempt_id))
    if any(attempt_id and conv.attempts[attempt_id].is_live for _, attempt_id in chain):
        raise InputRejected("Wait for the answer to finish (or stop it) before branching from it.")
    roles = [conv.messages[m].role for m, _ in chain]  # numbered as the chat shows them (not hidden versions)
    title = branch_title(conv.title, message.role, roles.count(message.role) + (message.role != "assistant"))
    branched = Branched(conversation_id=conv.conversation_id, message_id=message_id, new_conversation_id=new_cid)
    return Branching(tuple(chain), title, message.text if message.role == "user" else None, branched)


def branch_title(title: str, role: str, number: int) -> str:
    """ "… — branch from answer 3" (or "message 3"): what it branched from (its number among the answers, or the
    messages, the chat shows), within ``TITLE_CHARS``; a branch of a branch names its own point only."""
    suffix = f" — branch from {'answer' if role == 'assistant' else 'message'} {number}"
    base = (title or "Conversation").split(" — branch from ")[0]
    return base[: TITLE_CHARS - len(suffix)].rstrip() + suffix


def _started(cid: str, new: NewAttempt, answer_id: str, user_id: str, turn: int, trigger: Trigger) -> Started:
    return Started(
        conversation_id=cid,
        attempt_id=new.attempt_id,
        message_id=answer_id,
        user_message_id=user_id,
        turn=turn,
        model=new.model,
        trigger=trigger,
        preset_id=new.preset[0] if new.preset else None,
        preset_version=new.preset[1] if new.preset else None,
    )
