"""The audit's words for the remote tool servers a chat used (``tool_server_used``, ``tool_server_gone``): which
server ran the chat's tools, where it is, whose it is, who added it and who last switched it, and when; and, once
it went, that it was switched off (by whom) or removed, so a person reading the audit knows why a tool vanished.

Guarantees: pure functions of the recorded events (nothing read from the Tools panel's settings now); a person is
named as the audit names people (``local:ann`` reads "ann"); times as ``ui.format.date_time`` (in UTC: such a
setting may be days old); the URL exactly as recorded, which never holds credentials, a query or a fragment.
"""

from __future__ import annotations

from ledger.events import ToolServerEvent, ToolServerGone, ToolServerUsed
from ui.format import date_time

LABELS = {"tool_server_used": "tool server", "tool_server_gone": "tool server gone"}
ICONS = {"tool_server_used": "dns", "tool_server_gone": "cloud_off"}


def server_words(event: ToolServerEvent | None) -> str:
    """The second line of a ``tool_server_used`` or ``tool_server_gone`` phase."""
    if isinstance(event, ToolServerUsed):
        return used_words(event)
    if isinstance(event, ToolServerGone):
        return gone_words(event)
    return ""


def used_words(e: ToolServerUsed) -> str:
    """ "Tool server 'docs' (https://…/mcp), a team server, added by ann on 2026-12-04 10:02 UTC, first used here"."""
    parts = [f"Tool server {e.server!r} ({e.url})"]
    if e.team:
        parts.append("a team server")
    elif e.added_by is not None:  # team mode: a person's own (personal mode names nobody)
        parts.append(f"{person(e.added_by)}'s own server")
    parts.append(f"added{by(e.added_by)}{on(e.added_ts)}")
    if e.changed_ts:
        parts.append(f"switched {'on' if e.enabled else 'off'}{by(e.changed_by)}{on(e.changed_ts)}")
    parts.append("first used here")
    return ", ".join(parts)


def gone_words(e: ToolServerGone) -> str:
    """ "Tool server 'docs' (https://…/mcp) was switched off by bo on …: its tools are no longer offered here"."""
    where = f" ({e.url})" if e.url else ""
    if e.why == "disabled":
        what = f"was switched off{by(e.changed_by)}{on(e.changed_ts or '')}"
    else:
        what = "was removed from the Tools panel"
    return f"Tool server {e.server!r}{where} {what}: its tools are no longer offered here"


def person(who: str) -> str:
    return who.removeprefix("local:")


def by(who: str | None) -> str:
    return f" by {person(who)}" if who else ""


def on(ts: str) -> str:
    return f" on {date_time(ts)}" if ts else ""
