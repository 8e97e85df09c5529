"""A conversation's history as ``session/update``s, for ``session/load``: what an editor that reconnects is shown.

Guarantees: pure (reads a ``ConversationState``, nothing else). Along the shown path (``ledger.tree``), each user
message is one ``user_message_chunk`` with its text, then one per file it carried: a ``resource_link`` naming the
file (its name, media type and size; the URI ``ledgerchat:files/<sha256>``: the bytes stay in the blob store); each
answer whose selected attempt enters the model history (complete, or interrupted with its kept prefix:
``AttemptState.in_history``) is, step by step, its reasoning as an ``agent_thought_chunk``, its text as one
``agent_message_chunk`` and each answered tool call as one ``tool_call`` carrying its final status and the tool's
content (``editor.projection.announced``). So the text a loaded session shows is the text the ledger keeps, the same
the editor was streamed. Answers that failed or were stopped before any text show nothing, as in the model history.
"""

from __future__ import annotations

from acp.helpers import update_agent_message_text, update_agent_thought_text, update_user_message_text
from acp.schema import ResourceContentBlock, UserMessageChunk

from editor.projection import Update, announced
from ledger.events import Attachment
from ledger.state import AttemptState, ConversationState
from ledger.tree import selected_path

Replayed = Update | UserMessageChunk


def replayed(conv: ConversationState) -> list[Replayed]:
    """The updates that show ``conv``'s shown path, in order."""
    out: list[Replayed] = []
    for message_id in selected_path(conv):
        message = conv.messages[message_id]
        if message.role == "user":
            out.append(update_user_message_text(message.text))
            out += [file_link(attachment) for attachment in message.attachments]
            continue
        attempt_id = message.selected_attempt_id or message.current_attempt_id
        attempt = conv.attempts.get(attempt_id) if attempt_id is not None else None
        if attempt is not None and attempt.in_history:
            out += answer(attempt)
    return out


def answer(attempt: AttemptState) -> list[Replayed]:
    """One answer: its reasoning, then per step its text and its answered tool calls."""
    out: list[Replayed] = []
    if attempt.reasoning:
        out.append(update_agent_thought_text(attempt.reasoning))
    for index in range(max(len(attempt.steps), 1)):
        if text := attempt.step_text(index):
            out.append(update_agent_message_text(text))
        out += [announced(call) for call in attempt.step_calls(index) if call.answered]
    return out


def file_link(attachment: Attachment) -> UserMessageChunk:
    """A file of a user message, replayed as a link to it by content (its bytes are not sent again)."""
    uri, kind = f"ledgerchat:files/{attachment.sha256}", attachment.media_type
    link = ResourceContentBlock(
        type="resource_link", uri=uri, name=attachment.name, mime_type=kind, size=attachment.size
    )
    return UserMessageChunk(session_update="user_message_chunk", content=link)
