"""The message tree of a conversation: which path is shown, and which messages came before a given one.

A user message follows a *parent*: the attempt of the answer it replied to (or ``None`` at the root). Editing a
user message adds a sibling (same parent); retrying an answer adds an attempt, under which later turns start a new
branch. Which sibling a parent leads to is chosen (``chosen``; the newest by default, ``version_selected`` to
change it); which attempt an answer shows is its selected attempt.

Guarantees: pure functions of a ``ConversationState``; ``selected_path`` is the conversation as shown, from the
root to its tip; ``chain_before(m)`` is what came before message ``m`` along its own ancestry (the attempts its
ancestors actually followed), whatever is selected now; ``tip`` is what a new message follows.
"""

from __future__ import annotations

from ledger.state import ConversationState, MessageState

ROOT = ""


def selected_path(conv: ConversationState) -> tuple[str, ...]:
    """Message ids from the root to the tip along the chosen versions and selected attempts."""
    path: list[str] = []
    key = ROOT
    seen: set[str] = set()
    while (user_id := conv.chosen.get(key)) is not None and user_id not in seen:
        seen.add(user_id)
        path.append(user_id)
        reply_id = conv.messages[user_id].reply_id
        if reply_id is None:
            key = user_id
            continue
        path.append(reply_id)
        key = conv.messages[reply_id].selected_attempt_id or ""
        if key not in conv.chosen and reply_id in conv.chosen:
            key = reply_id  # a ledger written before parents: later turns follow the answer, whatever its attempt
        if not key:
            break
    return tuple(path)


def tip(conv: ConversationState) -> str | None:
    """What a new user message follows: the selected attempt of the last answer shown (or a lone user message)."""
    path = selected_path(conv)
    if not path:
        return None
    last = conv.messages[path[-1]]
    return last.selected_attempt_id if last.role == "assistant" else last.message_id


def legacy_tip(conv: ConversationState) -> str | None:
    """What a user message with no recorded parent follows (ledgers written before messages had parents): the
    last answer shown as a message, so switching that answer's attempt later never hides the turns after it."""
    path = selected_path(conv)
    return path[-1] if path else None


def chain_before(conv: ConversationState, message_id: str) -> list[tuple[str, str | None]]:
    """(message id, attempt id for an answer) for every message before ``message_id`` on its ancestry, in order."""
    message = conv.messages[message_id]
    chain: list[tuple[str, str | None]] = []
    parent: str | None
    user_id = message.user_message_id
    if message.role == "assistant" and user_id is not None and user_id in conv.messages:
        chain.append((user_id, None))
        parent = conv.messages[user_id].parent
    else:
        parent = message.parent
    seen: set[str] = set()
    while parent and parent not in seen:
        seen.add(parent)
        if parent in conv.attempts:
            answer = conv.messages[conv.attempts[parent].message_id]
            chain.append((answer.message_id, parent))
            user = conv.messages.get(answer.user_message_id or "")
            if user is None:
                break
            chain.append((user.message_id, None))
            parent = user.parent
        elif parent in conv.messages and conv.messages[parent].role == "assistant":
            answer = conv.messages[parent]
            chain.append((answer.message_id, answer.selected_attempt_id))
            user = conv.messages.get(answer.user_message_id or "")
            if user is None:
                break
            chain.append((user.message_id, None))
            parent = user.parent
        elif parent in conv.messages:
            chain.append((parent, None))
            parent = conv.messages[parent].parent
        else:
            break
    chain.reverse()
    return chain


def versions(conv: ConversationState, user: MessageState) -> tuple[str, ...]:
    """The user message and its siblings (the original and its edits), in the order they were written."""
    return conv.children.get(user.parent or ROOT, (user.message_id,))
