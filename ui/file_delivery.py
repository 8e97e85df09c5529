"""What the model will receive of each attached file, said on its chip before Send.

Guarantees: ``said(files, attachment, model)`` is the sentence for the chip and whether it warns, from
``engine.files.delivery``: the very decision the request is built from (an image, a PDF, its text, the text cut at
its limit, or only the file's name and size), so the chip cannot say what the request will not do. It reads the
stored bytes on a worker thread (a text file's text is decoded to know whether it is text). ``NAME_ONLY_NOTICE``
is said once, as a notice, when a file the model cannot read is attached.
"""

from __future__ import annotations

import asyncio

from engine.files import Delivery, Files, delivery
from ledger.events import Attachment

WORDS: dict[Delivery, tuple[str, bool]] = {  # (what the chip says, whether it warns)
    "image": ("the model sees the image", False),
    "no-images": ("this model does not take images: Send will refuse it", True),
    "pdf": ("the model gets the PDF", False),
    "pdf-text": ("the model gets its text", False),
    "text": ("the model reads it as text", False),
    "text-cut": ("the model reads its first 200,000 characters", True),
    "name-only": ("the model cannot read it: only its name and size are sent", True),
    "gone": ("no longer stored: attach it again", True),
}
NAME_ONLY_NOTICE = (
    "{name}: the model cannot read this file (not text, an image or a PDF); it is told only its name and size."
)


async def said(files: Files, attachment: Attachment, model: str) -> tuple[Delivery, str, bool]:
    """The chip's words for ``attachment`` sent to ``model``: (the decision, its words, whether they warn)."""

    def decide() -> Delivery:
        return delivery(attachment, model, files.read(attachment.sha256))[0]

    how = await asyncio.to_thread(decide)
    words, warns = WORDS[how]
    return how, words, warns


def source_words(attachment: Attachment) -> list[str]:
    """Where a tool server's attachment came from (``["from prompt demo/standup"]``, ``["from resource demo
    notes://demo/notes.md"]``); none for a file a person attached."""
    if attachment.origin is None:
        return []
    joint = "/" if attachment.origin == "prompt" else " "
    refreshed = " (refreshed)" if attachment.replaces else ""
    return [f"from {attachment.origin} {attachment.server}{joint}{attachment.ref}{refreshed}"]
