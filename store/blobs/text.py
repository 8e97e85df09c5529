"""Long texts kept as blobs: what a writer does with a text over ``ledger.bounds.TEXT_BOUND`` before it is an event.

Guarantees:
- ``keep_text(blobs, text)`` returns ``(text, None)`` for a text within the bound (nothing stored); for a longer
  one it puts the text's UTF-8 bytes (``ledger.bounds.encoded``) in the blob store by sha256 and returns its preview
  (``ledger.bounds.preview``) with the ``TextRef`` naming the blob, its size in bytes and its characters. The blob
  holds exactly the text (read it back with ``read_text``): nothing is lost.
- Blocking (hashing, writing): call it off the event loop. It raises what the blob store raises (``BlobTooLarge``).
"""

from __future__ import annotations

from ledger.bounds import encoded, is_over, preview
from ledger.events import TextRef
from store.blobs.api import BlobStore

TEXT_TYPE = "text/plain; charset=utf-8"


def keep_text(blobs: BlobStore, text: str) -> tuple[str, TextRef | None]:
    if not is_over(text):
        return text, None
    data = encoded(text)
    sha = blobs.put(data, TEXT_TYPE)
    return preview(text), TextRef(sha256=sha, size=len(data), chars=len(text))


def read_text(blobs: BlobStore, ref: TextRef) -> str | None:
    """The whole text a ``TextRef`` names, or None when its blob is gone."""
    data = blobs.get(ref.sha256)
    return None if data is None else data.decode("utf-8", "surrogatepass")
