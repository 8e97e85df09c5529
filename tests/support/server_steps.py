"""Remote tool servers' steps in the reducer's random sessions (``tests.support.session_steps``): a server recorded
as used by a call of an attempt, and a server recorded as gone; server names ``docs0``..``docs2`` collide often, so a
server is used again after it went, by an ended attempt (late), or in another version."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from ledger.events.core import AnyEvent
from ledger.events.tool_server import ToolServerGone, ToolServerUsed

SERVER_STEPS = {
    "server_used": st.tuples(st.just("server_used"), st.integers(0, 7), st.integers(0, 2), st.booleans()),
    "server_gone": st.tuples(
        st.just("server_gone"), st.integers(0, 7), st.integers(0, 2), st.sampled_from(["disabled", "removed"])
    ),
}
ACTOR = "local:ann"


def server_event(step: tuple[Any, ...], base: dict[str, Any], attempt_id: str, call_id: str) -> AnyEvent:
    """The event of a server step for ``attempt_id`` (its call ``call_id``)."""
    kind, server = step[0], f"docs{step[2]}"
    url = f"https://docs{step[2]}.example/mcp"
    if kind == "server_used":
        changed = base["ts"] if step[3] else None
        return ToolServerUsed(**base, attempt_id=attempt_id, call_id=call_id, server=server, url=url, team=step[3],
                              added_by=ACTOR, added_ts="2026-11-30T07:00:00.000Z", changed_by=changed and ACTOR,
                              changed_ts=changed, version=f"v{base['seq'] % 3}", actor=ACTOR)  # fmt: skip
    by, ts = (ACTOR, base["ts"]) if step[3] == "disabled" else (None, None)
    return ToolServerGone(**base, attempt_id=attempt_id, server=server, why=step[3], url=url, changed_by=by,
                          changed_ts=ts)  # fmt: skip
