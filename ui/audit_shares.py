"""The audit panel's share links: what the owner's audit says of each link of the chat (issue 36: "creating,
updating, revoking and opening are ledger events; the owner's audit shows them").

Guarantees:
- Everything shown is ``ConversationState.shares`` (the reducer's fold of ``share_created``, ``share_updated``,
  ``share_revoked`` and ``share_opened``, ``ledger.shares``): nothing is read from the share store, so a link
  revoked elsewhere reads as revoked here once its event is folded.
- Per link, newest first (as ``ledger.shares.shares_of`` orders them): when it was shared, with its options (who
  may open it, tool details, attachments, expiry); when it was last updated (a newer snapshot or other options),
  if it was; when it was revoked, if it was; how many times it was opened (counted, never by whom: the ledger does
  not know).
- ``share_lines`` is pure (the words, made here); ``shares_card`` draws them; ``shares_signature`` changes whenever
  one of them would, so the panel redraws only then.
"""

from __future__ import annotations

from collections.abc import Mapping

from nicegui import ui

from ledger.events import ShareState
from ui.format import date_time

__all__ = ["share_lines", "shares_card", "shares_signature"]

AUDIENCE = {"anyone": "anyone with the link", "members": "signed-in members only"}


def share_lines(share: ShareState) -> list[tuple[str, str]]:
    """(icon, sentence) for one link, in the order things happened to it."""
    options = ", ".join(
        (
            f"open to {AUDIENCE.get(share.audience, share.audience)}",
            "with tool details" if share.tools else "without tool details",
            "with attachments" if share.attachments else "without attachments",
            f"expires {date_time(share.expires)}" if share.expires else "does not expire",
        )
    )
    lines = [("share", f"Shared on {date_time(share.created_ts)}: {options}")]
    if share.updated_ts != share.created_ts:
        lines.append(("update", f"Updated on {date_time(share.updated_ts)}: the link shows the chat as it was then"))
    if share.revoked_ts is not None:
        lines.append(("link_off", f"Revoked on {date_time(share.revoked_ts)}: the link opens nothing"))
    times = "once" if share.opens == 1 else f"{share.opens} times"
    lines.append(("visibility", f"Opened {times}" if share.opens else "Not opened yet"))
    return lines


def shares_signature(shares: Mapping[str, ShareState]) -> tuple[object, ...]:
    """What the card shows, as a value: equal exactly when nothing of it changed."""
    return tuple((s.share_id, s.updated_ts, s.revoked_ts, s.opens) for s in _newest_first(shares))


def _newest_first(shares: Mapping[str, ShareState]) -> list[ShareState]:
    return sorted(shares.values(), key=lambda s: s.created_ts, reverse=True)


def shares_card(shares: Mapping[str, ShareState]) -> None:
    """The chat's links as one card of the audit panel (nothing when it has none)."""
    if not shares:
        return
    listed = _newest_first(shares)
    with ui.card().classes("w-full lc-audit-card").props("flat bordered").mark("audit-shares"):
        ui.label("Share links" if len(listed) > 1 else "Share link").classes("font-medium")
        for share in listed:
            with ui.column().classes("gap-0 w-full").props(f'data-share="{share.share_id}"').mark("audit-share"):
                for icon, sentence in share_lines(share):
                    with ui.row().classes("items-baseline no-wrap gap-2"):
                        ui.icon(icon, size="xs").classes("lc-phase-icon")
                        ui.label(sentence).classes("text-sm break-words")
