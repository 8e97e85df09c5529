"""How long a text an event may carry: the one bound, and the preview kept in an event in place of a longer text.

Guarantees (pure: no I/O):
- ``TEXT_BOUND`` (1 MB of UTF-8) is the most a user message's text or a tool result's text may hold in an event;
  a longer one is kept whole as a blob by whoever writes the event (the engine for new writes, the TinyDB back end
  for files written before the bound), and the event carries ``preview(text)`` and a ``TextRef``
  (``ledger.events.values``): nothing of the text is lost, only moved.
- ``is_over(text)`` says whether a text is over the bound, costing one encode only for texts that may be.
- ``preview(text)`` is the first ``PREVIEW_BYTES`` (64 KB) of the text's UTF-8, cut at a character boundary:
  always a prefix of the text (lone surrogates kept as they are).
- ``encoded(text)`` is the bytes a blob holds for a text (UTF-8; a lone surrogate kept as its three bytes, so a
  text read back from a file is kept exactly as it was).
"""

from __future__ import annotations

TEXT_BOUND = 1024 * 1024
PREVIEW_BYTES = 64 * 1024


def encoded(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def is_over(text: str) -> bool:
    """Whether ``text``'s UTF-8 is longer than ``TEXT_BOUND`` (a character is 1 to 4 bytes)."""
    if len(text) > TEXT_BOUND:
        return True
    return len(text) * 4 > TEXT_BOUND and len(encoded(text)) > TEXT_BOUND


def preview(text: str) -> str:
    """The first ``PREVIEW_BYTES`` of ``text`` (whole characters)."""
    head = text[:PREVIEW_BYTES]
    data = encoded(head)
    if len(data) <= PREVIEW_BYTES:
        return head
    cut = PREVIEW_BYTES
    while data[cut] & 0xC0 == 0x80:  # a continuation byte: the character began before the cut
        cut -= 1
    return data[:cut].decode("utf-8", "surrogatepass")
