"""Short notices (toasts): one at a time, at the top, so they never pile up over the message box.

Guarantees: every notice of a page goes through ``notice``; a new one replaces the one showing (Quasar's notify
``group``: the newest text, with a count when several came); warnings stay 5 s, confirmations 1.5 s; the text is
shown as text.
"""

from __future__ import annotations

from typing import Literal

from nicegui import ui

from ledger.errors import StoreError

Kind = Literal["positive", "negative", "warning", "info", "ongoing"]


def notice(text: str, kind: Kind = "info", *, multi_line: bool = False) -> None:
    timeout = 1500 if kind == "positive" else 5000
    ui.notify(text, type=kind, position="top", group="ledger-chat", timeout=timeout, multi_line=multi_line, html=False)


def not_recorded(exc: StoreError) -> str:
    """Why a Send was not recorded, as a sentence (the text stays in the box)."""
    reason = str(exc).strip().rstrip(".") or type(exc).__name__
    return (
        f"Your message was not sent: it could not be saved ({reason}). It is still in the box; nothing was sent "
        "to the model. Send it again in a moment."
    )
