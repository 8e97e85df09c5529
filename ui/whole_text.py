"""A text kept as a blob because it is over ``ledger.bounds.TEXT_BOUND`` (a message, a tool result): the page shows
its preview (what the event holds), a line saying how much that is, and a link that downloads the whole.

Guarantees: ``whole_line(shown, ref)`` is the line, "Showing the first 64 KB of 20 MB" (sizes in the words the file
chips use: ``ui.attachments.size_words``); ``show_whole(shown, ref)`` adds that line and the link "Download the
whole text" to ``/files/{sha256}`` (``ui.files_routes``: behind the same front door as every file, served as an
attachment under the name the ledger gives it, ``ui.download_names.whole_name``), both marked ``whole-text``; the
link's address holds only the hex sha256 the ledger recorded. The preview itself is shown by the caller as plain
text, never as Markdown.
"""

from __future__ import annotations

import re

from nicegui import ui

from ledger.bounds import encoded
from ledger.events import TextRef
from ui.attachments import size_words

SHA256 = re.compile(r"[0-9a-f]{64}")


def whole_line(shown: str, ref: TextRef) -> str:
    return f"Showing the first {size_words(len(encoded(shown)))} of {size_words(ref.size)}"


def show_whole(shown: str, ref: TextRef) -> None:
    with ui.row().classes("items-center gap-2 lc-meta").mark("whole-text"):
        ui.label(whole_line(shown, ref))
        if SHA256.fullmatch(ref.sha256):
            link = ui.link("Download the whole text", f"/files/{ref.sha256}").props("download")
            link.props["data-whole"] = ref.sha256
