"""Share links' steps in the reducer's random sessions (``tests.support.session_steps``): a link made at the
conversation's latest event, moved to a newer snapshot, revoked, opened; share ids ``s0``..``s2`` collide often, so
an update or an open of a revoked or unknown link comes up too."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ledger.events.core import AnyEvent
from ledger.events.share import ShareCreated, ShareOpened, ShareRevoked, ShareUpdated

SHARE_STEPS = {
    "share": st.tuples(st.just("share"), st.integers(0, 2), st.booleans(), st.sampled_from(["anyone", "members"])),
    "share_update": st.tuples(st.just("share_update"), st.integers(0, 2), st.booleans()),
    "share_revoke": st.tuples(st.just("share_revoke"), st.integers(0, 2)),
    "share_open": st.tuples(st.just("share_open"), st.integers(0, 2), st.integers(1, 5)),
}
ACTOR = "local:ann"


def share_event(step: tuple[Any, ...], base: dict[str, Any]) -> AnyEvent:
    """The event of a share step, its snapshot the event before it (the conversation's latest when it was made)."""
    kind, share_id, at = step[0], f"s{step[1]}", base["seq"] - 1
    if kind == "share":
        token = format(step[1], "064x")
        return ShareCreated(**base, share_id=share_id, token_sha256=token, at_seq=at, tools=step[2],
                            attachments=not step[2], audience=step[3], actor=ACTOR)  # fmt: skip
    if kind == "share_update":
        expires = "2027-01-01T00:00:00.000+00:00"
        return ShareUpdated(**base, share_id=share_id, at_seq=at, tools=step[2], expires=expires, actor=ACTOR)
    if kind == "share_revoke":
        return ShareRevoked(**base, share_id=share_id, actor=ACTOR)
    return ShareOpened(**base, share_id=share_id, count=step[2])
