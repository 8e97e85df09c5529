"""An answer's status in the page: ``data-status`` and ``data-attempt`` on its element, never ahead of its text.

Guarantees: ``mark(root, streams, status, attempt)`` sends the two values with the element when it is made; after
that only the browser sets them, by code each of ``streams`` runs once it has sent every message for the text it
shows (``ui.markdown.MarkdownStream.after``): the page reads a status only with the whole text it is about (NiceGUI
sends a cycle's element updates before its messages, and the text travels as messages). The element's props keep
their first values, so a re-send of the element (a child added) never puts a newer status on the page early; an
older change still waiting on a slow text never overwrites a newer one (each stream runs its codes in order, and a
change counts only once every stream has run it). ``shown_status(root)`` is the pair the page is brought to (tests
without a browser read it). ``DOM_STATUS`` maps an attempt's status to the page's word.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import count
from weakref import WeakKeyDictionary

from nicegui import ui

from ui.markdown import MarkdownStream

DOM_STATUS = {
    "streaming": "streaming",
    "closing": "streaming",
    "complete": "complete",
    "interrupted": "interrupted",
    "failed": "failed",
    "empty": "empty",
}
SHOWN: WeakKeyDictionary[ui.element, tuple[str, str]] = WeakKeyDictionary()  # (data-status, data-attempt) by root
_changes = count(1)


def shown_status(root: ui.element) -> tuple[str, str] | None:
    """The ``data-status`` and ``data-attempt`` an answer's element is brought to in the page."""
    return SHOWN.get(root)


def mark(root: ui.element, streams: Sequence[MarkdownStream], status: str, attempt: str) -> None:
    if root not in SHOWN:  # made now: sent with the element
        root.props["data-status"], root.props["data-attempt"] = status, attempt
    elif SHOWN[root] == (status, attempt):
        return
    SHOWN[root] = (status, attempt)
    code = (
        f"(k=>{{const w=(window.lcMarks??={{}});if((w[k]=(w[k]||0)+1)<{len(streams)})return;delete w[k];"
        f"const e=document.getElementById('c{root.id}');"
        f"if(e){{e.dataset.status='{status}';e.dataset.attempt='{attempt}';}}}})('{root.id}-{next(_changes)}')"
    )
    for stream in streams:
        stream.after(code)
