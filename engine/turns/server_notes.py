"""What a turn records in its conversation's ledger about the remote tool servers people add from the Tools panel
(docs/ledger.md, "Remote tool servers"): the servers are settings outside the ledger, and a chat's audit still says
which server ran its tools and why one vanished.

Guarantees (decided from the conversation's state, the reducer's fold of what was recorded, and the hub's
``remote_notes``: a replay decides exactly as the live turn did):
- ``note_used`` appends one ``tool_server_used`` just before the ``tool_dispatched`` of a call of a remote server
  when the conversation has no record of this server, or its last record is a ``tool_server_gone`` or another
  version of it (added again, switched on or off since): the first call since the server was added or changed.
- ``note_gone`` (as an answer's turn starts, before its first request) appends one ``tool_server_gone`` for each
  server whose last record is a ``tool_server_used`` and which the turn no longer offers: ``disabled`` (switched off,
  with who did it and when) when the owner still has it, ``removed`` when not. A server recorded as gone is not
  recorded again until it is used again. An app started without tools (no hub) records nothing: its servers
  are still there, only nothing is offered.
- Nothing here carries a secret: the URL is ``engine.tools.server_note.shown_url``'s.
"""

from __future__ import annotations

from engine.tools import ToolHub
from engine.turns.attempt import AttemptRun
from ledger.events import ToolServerGone, ToolServerUsed


def note_used(run: AttemptRun, hub: ToolHub, call_id: str, server: str) -> None:
    """Before the call ``call_id`` to ``server`` is dispatched: record the server if this chat has not since it
    was added or changed."""
    note = hub.remote_notes().get(server)
    conv = run.view()
    if note is None or conv is None:
        return  # a configured server (or the chat is gone): its settings are the configuration's
    last = conv.tool_servers.get(server)
    if isinstance(last, ToolServerUsed) and last.version == note.version:
        return
    run.append(
        ToolServerUsed(
            **run.ids,
            call_id=call_id,
            server=server,
            url=note.url,
            team=note.team,
            added_by=note.added_by,
            added_ts=note.added_ts,
            changed_by=note.changed_by,
            changed_ts=note.changed_ts,
            enabled=note.enabled,
            version=note.version,
        )
    )


def note_gone(run: AttemptRun, hub: ToolHub | None) -> None:
    """As an answer's turn starts: record each server this chat used that the turn no longer offers, and why."""
    conv = run.view()
    if conv is None or run.purpose != "answer" or hub is None:
        return  # no hub: the app runs without tools (``--no-tools``), the servers are not gone, only not offered
    notes = hub.remote_notes()
    for name, last in list(conv.tool_servers.items()):
        if not isinstance(last, ToolServerUsed):
            continue
        note = notes.get(name)
        if note is not None and note.enabled:
            continue
        off = note is not None  # still the owner's, switched off; else removed
        run.append(
            ToolServerGone(
                **run.ids,
                server=name,
                why="disabled" if off else "removed",
                url=last.url,
                changed_by=note.changed_by if note is not None else None,
                changed_ts=note.changed_ts if note is not None else None,
            )
        )
