"""Streaming markdown into the page: finished blocks are frozen in their own elements, only the tail is re-sent.

Guarantees: ``show(text)`` makes the element show exactly ``text`` (rendered by ``MarkdownBlock``); when text is
only appended, a finished block is sent to the browser once and never again; if the text changes in any other
way (another attempt), everything is rebuilt; the growing tail is shown with half-written markdown closed
(``ui.closing``), so neither a streaming nor a stopped answer shows raw ``**`` or an open code fence.
"""

from __future__ import annotations

from nicegui import ui

from ui.closing import closed
from ui.safe_markdown import MarkdownBlock, split_blocks


class MarkdownStream:
    def __init__(self) -> None:
        self.root = ui.column().classes("w-full gap-0")
        self._frozen: list[str] = []
        self._tail = ""
        with self.root:
            self.tail = MarkdownBlock("")

    def show(self, text: str) -> None:
        blocks = split_blocks(text)
        finished, tail = blocks[:-1], blocks[-1]
        if finished[: len(self._frozen)] != self._frozen:
            self.clear()
        fresh = finished[len(self._frozen) :]
        if fresh:
            # The growing tail element already holds most of the first finished block: freeze it in place and
            # start a new tail, so a finished paragraph is never sent again.
            self.tail.set_markdown(fresh[0])
            with self.root:
                for block in fresh[1:]:
                    MarkdownBlock(block)
                self.tail = MarkdownBlock("")
            self._frozen.extend(fresh)
            self._tail = ""
        if tail != self._tail:
            self._tail = tail
            self.tail.set_markdown(closed(tail))  # half-written markers shown as if closed; the text is unchanged

    def clear(self) -> None:
        self._frozen, self._tail = [], ""
        self.root.clear()
        with self.root:
            self.tail = MarkdownBlock("")
