"""Whether a model can take a request's files, asked before anything is appended or sent.

Guarantees: ``refusal(model, attachments)`` is None when every file can go to ``model`` (images only to a model
that takes images; PDF goes to every model: as a file part or as its extracted text; text as text; any other file
as a line saying what it is), else one sentence naming the file and the model, to be raised as ``InputRejected``
(the draft and its files stay on the page).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from engine.files.models import takes_images
from engine.files.service import Files
from engine.files.sniff import RASTER
from engine.offline import ready
from ledger.decide import InputRejected
from ledger.events import Attachment
from ledger.history import HistoryEntry, model_history
from ledger.state import ConversationState

Attached = tuple[Attachment, ...]


def refusal(model: str, attachments: Iterable[Attachment]) -> str | None:
    images = [a for a in attachments if a.media_type in RASTER]
    if images and not takes_images(model):
        names = ", ".join(dict.fromkeys(a.name for a in images))
        return (
            f"The model {model} does not take images ({names}): remove them, or pick a model that does "
            "(a model litellm does not know can be declared with --model-info)."
        )
    return None


def in_history(entries: Iterable[HistoryEntry]) -> list[Attachment]:
    """The files every user message of a history carries, in order."""
    return [a for entry in entries for a in entry.attachments]


async def admit(
    files: Files, conv: ConversationState, model: str, new: tuple[Attachment, ...], *, until: str | None
) -> None:
    """Refuse (``InputRejected``) a request whose new files break the limits or are gone, or whose history's files
    (along the branch before ``until``, the tip when None) and new ones ``model`` cannot take."""
    if new:
        await asyncio.to_thread(files.check_message, new)
    carried = [*in_history(model_history(conv, until_message_id=until)), *new]
    if not carried:
        return
    await ready()
    reason = await asyncio.to_thread(refusal, model, carried)
    if reason is not None:
        raise InputRejected(reason)


def kept(conv: ConversationState, edit_of: str | None) -> tuple[Attachment, ...]:
    """The files of the message being edited (an edit that names none keeps them)."""
    message = conv.messages.get(edit_of or "")
    return message.attachments if message is not None else ()
