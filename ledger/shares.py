"""A conversation's share links in the reducer's state: what ``share_created``, ``share_updated``,
``share_revoked`` and ``share_opened`` make of ``ConversationState.shares`` (docs/ledger.md, "Share links").

Guarantees (pure):
- ``reduce_share`` keeps one ``ShareState`` per share id: made by its ``share_created`` (a second one for the same
  id changes nothing: a link is never re-keyed), moved to a newer snapshot or other options by ``share_updated``,
  closed for good by ``share_revoked`` (nothing after it reopens or changes it: an update of a revoked link is
  ignored), its opens counted by ``share_opened``. Events for an unknown id change nothing.
- None of them changes anything else of the conversation: not its last activity, title, messages or attempts
  (the reducer leaves ``updated_ts`` as it was; only ``last_seq`` moves).
- ``holds(share, now)``: whether the link opens anything at ``now`` (ISO 8601 UTC): not revoked, not expired.
- ``shares_of(conv)``: the links, newest first.
"""

from __future__ import annotations

from typing import assert_never

from ledger.events import ShareCreated, ShareEvent, ShareOpened, ShareRevoked, ShareState, ShareUpdated
from ledger.state import ConversationState

__all__ = ["holds", "reduce_share", "shares_of"]


def reduce_share(conv: ConversationState, event: ShareEvent) -> ConversationState:
    """The conversation after one share event (see the module's guarantees)."""
    share = conv.shares.get(event.share_id)
    match event:
        case ShareCreated():
            if share is not None:
                return conv
            new = ShareState(
                share_id=event.share_id,
                token_sha256=event.token_sha256,
                at_seq=event.at_seq,
                created_ts=event.ts,
                updated_ts=event.ts,
                tools=event.tools,
                attachments=event.attachments,
                audience=event.audience,
                expires=event.expires,
                actor=event.actor,
            )
        case ShareUpdated():
            if share is None or share.revoked_ts is not None:
                return conv
            new = share._replace(
                at_seq=event.at_seq,
                updated_ts=event.ts,
                tools=event.tools,
                attachments=event.attachments,
                audience=event.audience,
                expires=event.expires,
            )
        case ShareRevoked():
            if share is None or share.revoked_ts is not None:
                return conv
            new = share._replace(revoked_ts=event.ts)
        case ShareOpened():
            if share is None:
                return conv
            new = share._replace(opens=share.opens + max(event.count, 0))
        case _:
            assert_never(event)
    return conv._replace(shares={**conv.shares, event.share_id: new})


def holds(share: ShareState, now: str) -> bool:
    """Whether the link opens anything at ``now``: not revoked and not past its expiry."""
    return share.revoked_ts is None and (share.expires is None or now < share.expires)


def shares_of(conv: ConversationState) -> list[ShareState]:
    """The conversation's links, newest first."""
    return sorted(conv.shares.values(), key=lambda s: s.created_ts, reverse=True)
