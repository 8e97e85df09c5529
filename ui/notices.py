"""Short notices (toasts): at the top, below the header, so they never lie over the chat's title or the model
picker (``static/surface.css``); several at once stack downwards.

Guarantees: every notice of a page goes through ``notice``; the same text again is one notice with its count (Quasar's
notify ``group``, keyed by the text), different texts show together, each whole (two files refused at once are two
reasons, never one with a count hiding the other); warnings stay 5 s, confirmations 1.5 s; the text is shown as text.
"""

from __future__ import annotations

from typing import Literal

from nicegui import ui

from ledger.errors import StoreError

Kind = Literal["positive", "negative", "warning", "info", "ongoing"]


def notice(text: str, kind: Kind = "info", *, multi_line: bool = False) -> None:
    timeout = 1500 if kind == "positive" else 5000
    ui.notify(
        text, type=kind, position="top", group=f"{kind}:{text}", timeout=timeout, multi_line=multi_line, html=False
    )


def not_recorded(exc: StoreError) -> str:
    """Why a Send was not recorded, as a sentence (the text stays in the box)."""
    reason = str(exc).strip().rstrip(".") or type(exc).__name__
    return (
        f"Your message was not sent: it could not be saved ({reason}). It is still in the box; nothing was sent "
        "to the model. Send it again in a moment."
    )
