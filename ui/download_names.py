"""The name a download is saved under, read from the ledger, never from the request.

Guarantees: ``tool_file_name(part)`` is the name a tool's file is shown and downloaded under (the last part of
its URI, reduced to ``[A-Za-z0-9._-]``, at most 80 characters, else ``file``); ``ledger_name(conversations, sha)``
is the recorded name of a file some loaded conversation names (a message's attachment, a queued message's, a
tool's file, the whole text of a long message or tool result: ``whole_name``), the first found, else None.
``GET /files/{sha}`` (``ui.files_routes``) serves a download under that
name, or under the name ``POST /files`` recorded for it, or as ``file-<first 12 hex digits>``: a link's query
chooses neither the name nor its extension. ``chat_file_name(conv)`` names a chat in the "download all" archive:
its title (no path separator, control or reserved character; at most 60 characters) and its id in brackets, so
names are readable, unique and the same for the ledger and the Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from ledger.events import ToolPart
from ledger.state import ConversationState


def chat_file_name(conv: ConversationState) -> str:
    title = re.sub(r'[\x00-\x1f\x7f/\\:*?"<>|]+', "-", conv.title or "New conversation")
    title = " ".join(title.split())[:60].strip(" .-") or "New conversation"
    return f"{title} ({conv.conversation_id})"


def tool_file_name(part: ToolPart) -> str:
    tail = urlsplit(part.uri).path.rsplit("/", 1)[-1] if part.uri else ""
    return re.sub(r"[^A-Za-z0-9._-]", "_", tail)[:80] or "file"


def whole_name(what: str, ident: str) -> str:
    """The name a long text's download is saved under: ``message-<id>.txt``, ``<tool>-result-<call id>.txt``."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{what}-{ident}")[:100] + ".txt"


def ledger_name(conversations: Iterable[ConversationState], sha256: str) -> str | None:
    """Blocking only as long as a walk over the loaded conversations' files takes (no store read)."""
    for conv in conversations:
        for message in conv.messages.values():
            if message.whole is not None and message.whole.sha256 == sha256:
                return whole_name("message", message.message_id)
            for a in message.attachments:
                if a.sha256 == sha256:
                    return a.name
        for queued in conv.queue:
            for a in queued.attachments:
                if a.sha256 == sha256:
                    return a.name
        for attempt in conv.attempts.values():
            for call in attempt.tool_calls.values():
                if call.whole is not None and call.whole.sha256 == sha256:
                    return whole_name(f"{call.name}-result", call.call_id)
                for part in call.parts:
                    if part.sha256 == sha256:
                        return tool_file_name(part)
    return None
