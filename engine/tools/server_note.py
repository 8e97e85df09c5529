"""What a turn records of a remote tool server in its conversation's ledger (``tool_server_used``,
``tool_server_gone``, made by ``engine.turns.server_notes``): the server's setting as the Tools panel keeps it,
without anything secret.

Guarantees:
- ``shown_url`` is the URL without user, password, query or fragment (a token put in an address never reaches the
  ledger, the audit or an export); what is left is the scheme, host, port and path.
- ``ServerNote.version`` changes when the server is added again or switched on or off (not when it lists other
  tools): a conversation records the server again at its next call after such a change.
- ``team`` is a team server of team mode (owner None); a person's own server, and every server in personal mode,
  is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from store.tokens import RemoteServer

__all__ = ["ServerNote", "note_of", "shown_url"]


@dataclass(frozen=True, slots=True)
class ServerNote:
    name: str
    url: str  # shown_url of its address
    team: bool
    enabled: bool
    added_by: str | None
    added_ts: str
    changed_by: str | None
    changed_ts: str | None

    @property
    def version(self) -> str:
        return f"{self.added_ts}|{self.changed_ts or ''}"


def note_of(server: RemoteServer, team_mode: bool) -> ServerNote:
    return ServerNote(
        name=server.name,
        url=shown_url(server.url),
        team=team_mode and server.owner is None,
        enabled=server.enabled,
        added_by=server.added_by,
        added_ts=server.added_ts,
        changed_by=server.changed_by,
        changed_ts=server.changed_ts or None,
    )


def shown_url(url: str) -> str:
    """``url`` less its user, password, query and fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return "(an address that is not a URL)"
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))
