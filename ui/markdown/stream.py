"""Streaming text into the page append-only: the browser gets what was added, never what it already has.

Guarantees:
- ``show(text, final)`` makes the element show exactly ``text``; when it only grew, one message carries the
  characters added (plus the blocks that finished), numbered in sequence (``static/markdown_stream.js``). A
  text that changed any other way (another attempt), a message the browser missed (a gap in the sequence) or a
  mount that shows another state than the server's (a reconnect) is answered with the whole state, once.
- The server stays authoritative and does the rendering (``ui.markdown.safe``: markdown-it + nh3; the browser's own
  HTML sanitizer, ``Element.setHTML``, as a second layer). A finished block is rendered once and sent as its
  markup plus ranges of the text the browser already holds (``html_parts``): a plain paragraph costs ~20 bytes
  over its text, so a streamed answer costs little more than its own size.
- The growing tail is rendered as markdown as it streams (``ui.markdown.tail``: the finished blocks' sanitizer,
  half-written markers closed where they render): a message carries the tail's markup from its first change on,
  as markup and ranges of the text the browser holds, with the offset it was rendered up to (a block that
  finishes as the browser shows it already is sent as a reference to its tail, one that grew since as what it
  adds to it); text after that
  offset (a long tail's render is throttled) shows as written until the next render. With ``final`` the tail
  becomes a block rendered exactly as written (only an open code fence is closed), so the page then holds
  exactly ``render_blocks(text)`` (what a reload shows): a completed answer shows exactly the text received.
- Work per update is on what was added: blocks are found by scanning only new lines (``BlockSplitter``), the
  only whole-text work is C-speed (``startswith``); a block or tail over ``INLINE_LIMIT`` characters is rendered
  in a worker thread, so the event loop never waits for the parser on a long block (blocks still arrive in order,
  and a tail is sent only once the blocks before it were).
- A block that cannot be rendered shows as written, with a note (``ui.markdown.safe.as_text``): rendering never
  raises into the stream, so an answer always ends (no tab left on Stop) and its chat always opens.
- ``plain=True`` (reasoning) shows the text as plain text only: nothing is rendered, nothing but the text sent.
- ``after(code)`` runs ``code`` in the browser once the browser has every message for the text shown so far (a
  block rendered off the loop, a mount's 'sync' answered): what is said about the text (an answer's status) never
  reaches the page before the text it is about (NiceGUI sends a cycle's element updates before its messages).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
from typing import Any

from nicegui import ui
from nicegui.events import GenericEventArguments

from ui.markdown.safe import BlockSplitter, Part, render_blocks
from ui.markdown.tail import Tail, delta, kept, packed
from ui.markdown.wire import block_parts, js_literal

INLINE_LIMIT = 4_000  # characters: rendering a longer block (up to ~0.5 ms/KB) moves to a worker thread


@dataclass(slots=True)
class _Block:
    start16: int  # where the block is in the text, in UTF-16 units (as the browser counts)
    end16: int
    source: str
    last: bool
    cut: bool = False
    parts: list[Part] | None = None


class MarkdownStream(ui.element, component="../static/markdown_stream.js"):
    def __init__(self, *, plain: bool = False) -> None:
        super().__init__()
        self.classes("w-full lc-stream" + (" whitespace-pre-wrap lc-meta" if plain else ""))
        self.plain = plain
        self.markdown = ""  # the text shown (what the browser holds)
        self._seq = 0
        self._epoch = 0
        self._final = False
        self._cut = False
        self._mounted = False
        self._splitter = BlockSplitter()
        self._mark = (0, 0)  # a code point offset and its UTF-16 offset (blocks are found in order)
        self._queue: deque[_Block] = deque()  # finished blocks not yet sent, in order
        self._sent: list[list[Any]] = []  # [start16, end16, packed parts] of every block sent (for a whole state)
        self._tail = Tail()
        self._tail_busy = False  # a long tail is being rendered in a worker thread
        self._held: tuple[int, list[Part]] = (-1, [])  # the tail the browser holds (its start and parts)
        self._tail_timer: asyncio.TimerHandle | None = None
        self._after: list[str] = []  # browser code waiting for the text shown to reach the browser (``after``)
        self._props["plain"] = plain
        self._props["sid"] = self.id
        self._props["init"] = self._whole()
        self.on("sync", self._on_sync)

    def show(self, text: str, final: bool = False, cut: bool = False) -> None:
        """Show ``text``; ``final``: it will not grow any more (the answer ended): render the tail too; ``cut``: it
        ended mid-way (stopped, failed): the last block is closed where closing adds no visible character."""
        shown = self.markdown
        if len(text) == len(shown) and final == self._final and text == shown and cut == self._cut:
            return
        if self._final or not text.startswith(shown) or cut != self._cut and final:
            self._restart(text)
            shown = ""
        self.markdown = text
        added = text[len(shown) :]
        tail = False
        if not self.plain:
            finished = self._splitter.feed(text)
            for start, end in finished:
                self._finish(start, end, last=False)
            if final and text[self._splitter.start :].strip():
                self._finish(self._splitter.start, len(text), last=True, cut=cut)
            tail = bool(final or finished or self._tail.due(len(text) - self._splitter.start))
        self._final, self._cut = final, cut
        self._send(added, tail)
        if not self.plain and not tail and self._tail_timer is None:
            self._render_later()
        self._flush_after()  # a restart that sent nothing new still lets waiting code run

    def after(self, code: str) -> None:
        """Run ``code`` in the browser after every message carrying the text shown so far."""
        self._after.append(code)
        self._flush_after()

    def _flush_after(self) -> None:
        if not self._after or not self._mounted or self._queue or self._tail_busy or self.is_deleted:
            return
        code, self._after = ";".join(self._after), []
        self.client.run_javascript(code)

    @property
    def content(self) -> str:
        """The HTML the page ends with for this text (tests read it)."""
        return self.markdown if self.plain else "".join(render_blocks(self.markdown, self._cut))

    # --- finished blocks -----------------------------------------------------------------------------------------

    def _finish(self, start: int, end: int, last: bool, cut: bool = False) -> None:
        source = self.markdown[start:end]
        block = _Block(start16=self._u16(start), end16=self._u16(end), source=source, last=last, cut=cut)
        self._queue.append(block)
        if len(source) <= INLINE_LIMIT:
            block.parts = block_parts(source, last, cut)
        else:
            self._render_off_loop(block)

    def _u16(self, at: int) -> int:
        """``at`` (a code point offset, never before the last one asked) in UTF-16 units, as the browser counts."""
        cp, u16 = self._mark
        piece = self.markdown[cp:at]
        u16 += len(piece) if piece.isascii() else len(piece.encode("utf-16-le")) // 2
        self._mark = (at, u16)
        return u16

    def _render_off_loop(self, block: _Block) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            block.parts = block_parts(block.source, block.last, block.cut)
            return
        epoch = self._epoch
        future = loop.run_in_executor(None, block_parts, block.source, block.last, block.cut)

        def done(f: asyncio.Future[list[Part]]) -> None:
            if epoch != self._epoch or f.cancelled():
                return
            block.parts = f.result()
            self._send("", True)

        future.add_done_callback(done)

    # --- messages ------------------------------------------------------------------------------------------------

    def _send(self, added: str, tail: bool = False) -> None:
        ready: list[list[Any]] = []
        sent: list[list[Any]] = []  # as sent: a block the browser shows already as its tail is named, not re-sent
        while self._queue and self._queue[0].parts is not None:
            block = self._queue.popleft()
            parts = block.parts or []  # (rendered: the loop's condition)
            ready.append([block.start16, block.end16, packed(parts)])
            sent.append(self._against_tail(block.start16, block.end16, parts) or ready[-1])
        shown = self._tail_message() if tail and not self._queue else None  # after the blocks before it
        if shown is not None:
            self._held = (self._tail.start, self._tail.parts)
        if not added and not ready and shown is None:
            return
        self._sent.extend(ready)
        self._seq += 1
        if self._mounted:
            message: list[Any] = [self._seq, added, sent, shown] if shown else [self._seq, added, sent]
            self._run(message if ready or shown else message[:2])
            self._flush_after()
        else:  # not in the browser yet: its state goes with the element if that is still to be sent, else the
            self._hold()  # 'sync' on mount asks for it (once, never per update)

    def _against_tail(self, start16: int, end16: int, parts: list[Part]) -> list[Any] | None:
        """A finished block as the tail the browser shows (0), as what it adds to it (``[start, end, parts, keep]``,
        ``ui.markdown.tail.delta``), or None: sent whole."""
        if start16 != self._held[0]:
            return None
        keep, rest = delta(self._held[1], parts)
        if keep == len(self._held[1]) == len(parts):
            return [start16, end16, 0]
        return [start16, end16, packed(rest, kept(keep), parts), keep] if keep else None

    def _hold(self) -> None:
        """The state the element carries if it is (re)sent, without sending it: a prop change would re-send the
        element with the whole text on every update until the browser mounts it (its square, on a slow mount)."""
        with self._props.suspend_updates():
            self._props["init"] = self._whole()

    def _whole(self) -> list[Any]:
        self._held = (self._tail.start, self._tail.parts)
        tail = self._tail.whole()
        return [self._seq, self.markdown, self._sent, tail and self._wire(tail), 1]

    def _wire(self, message: list[Any] | None) -> list[Any] | None:
        """A tail message as sent: its parts ``packed`` (their offsets from the parts it keeps)."""
        if message is None:
            return None
        start16, end16, keep, rest = message
        return [start16, end16, keep, packed(rest, kept(keep), self._tail.parts)]

    # --- the tail ------------------------------------------------------------------------------------------------

    def _tail_message(self) -> list[Any] | None:
        """The tail's change since the browser's (None: unchanged, or rendering in a worker thread)."""
        if self._tail_busy:
            return None
        start = len(self.markdown) if self._final else self._splitter.start
        source = self.markdown[start:]
        start16 = self._u16(start)
        end16 = start16 + (len(source) if source.isascii() else len(source.encode("utf-16-le")) // 2)
        if len(source) <= INLINE_LIMIT:
            return self._wire(self._tail.update(start16, end16, source))
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._wire(self._tail.update(start16, end16, source))
        self._tail_busy, epoch = True, self._epoch
        future = loop.run_in_executor(None, self._tail.update, start16, end16, source)

        def done(f: asyncio.Future[list[Any] | None]) -> None:
            if epoch != self._epoch or f.cancelled():
                return
            self._tail_busy = False
            if (message := f.result()) is not None and self._queue:
                self._tail.forget()  # not sent (blocks go first): the browser's tail is unknown, the next is whole
            elif message is not None:
                self._held = (self._tail.start, self._tail.parts)
                self._seq += 1
                if self._mounted:
                    self._run([self._seq, "", [], self._wire(message)])
                else:
                    self._hold()
            self._flush_after()
            if len(self.markdown) > start + len(source) and self._tail_timer is None and not self._final:
                self._render_later()  # text came while it rendered: it shows as written until the next render

        future.add_done_callback(done)
        return None

    def _render_later(self) -> None:
        """A throttled tail is rendered once it is due even if no more text comes (a stall shows no raw markers)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return

        def fire() -> None:
            self._tail_timer = None
            if not self.is_deleted and not self._final:
                self._send("", True)

        self._tail_timer = loop.call_later(self._tail.wait(), fire)

    def _run(self, message: list[Any]) -> None:
        """``[seq, text added, blocks finished]``, or with a 4th item: the whole state (``static/...js``)."""
        if self.is_deleted:
            return
        self.client.run_javascript(f"lcStream({self.id},{js_literal(message)})")

    def _restart(self, text: str) -> None:
        """Another text (not an extension): start over; the next message carries the whole state."""
        self._epoch += 1
        self._splitter = BlockSplitter()
        self._mark = (0, 0)
        self._queue.clear()
        self._sent = []
        self._tail = Tail()
        self._tail_busy = False
        self.markdown = ""
        self._final = False
        self._seq += 1
        if self._mounted:
            self._run(self._whole())

    def _on_sync(self, e: GenericEventArguments) -> None:
        """The browser mounted the element or missed a message: it shows state ``e.args``; bring it up to date."""
        self._mounted = True
        if e.args != self._seq:
            self._seq += 1
            self._run(self._whole())
        self._flush_after()
