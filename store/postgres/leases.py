"""Write leases on conversations: at most one app instance assigns a conversation's seqs at a time.

Guarantees:
- ``acquire`` takes the lease of a conversation (creating its row) when it is free, expired or already this
  instance's, and returns the highest committed seq; each acquisition gets a new token, so releasing an older
  token never frees a newer acquisition. A deleted conversation raises ``ConversationDeletedError``; one leased by
  another live instance raises ``ConversationBusyError`` naming it. Nothing is written in either case. A lease
  whose holder is a process of this host that is gone (``kill -9``), or an instance the caller names as dead
  (its attempt leases expired: ``store.postgres.owners``), is taken over at once, not waited out.
- ``fence`` is the check inside every batch transaction: it moves the conversation's ``last_seq`` from
  ``first - 1`` to ``last`` and renews the lease only while the token is still the current one. ``"lost"`` means
  the lease was lost (this instance stalled past ``writer_until`` and another took over): the caller must roll
  the batch back. ``"done"`` means this very batch was committed before (the token still holds the lease and
  ``last_seq >= last``: only the COMMIT's acknowledgement was lost, e.g. in a server restart): nothing is to be
  written again, and it counts as written.
- ``release`` frees the leases whose tokens are given, in the caller's transaction.
"""

from __future__ import annotations

import os
import socket
import uuid
from typing import Literal

import psycopg

from ledger.errors import ConversationBusyError, ConversationDeletedError

Conn = psycopg.Connection[tuple[object, ...]]

_ACQUIRE = """
INSERT INTO conversations AS c (id, writer, lease_token, writer_until)
VALUES (%(id)s, %(me)s, %(token)s, now() + make_interval(secs => %(lease)s))
ON CONFLICT (id) DO UPDATE
   SET writer = excluded.writer, lease_token = excluded.lease_token, writer_until = excluded.writer_until
 WHERE NOT c.deleted AND (c.writer IS NULL OR c.writer = excluded.writer OR c.writer_until < now())
RETURNING last_seq
"""
_TAKE_OVER = """
UPDATE conversations
   SET writer = %(me)s, lease_token = %(token)s, writer_until = now() + make_interval(secs => %(lease)s)
 WHERE id = %(id)s AND lease_token = %(old)s AND NOT deleted
RETURNING last_seq
"""
_FENCE = """
UPDATE conversations
   SET last_seq = %(last)s, updated = now(), writer_until = now() + make_interval(secs => %(lease)s),
       title = coalesce(%(title)s, title), deleted = %(deleted)s,
       deleted_at = CASE WHEN %(deleted)s THEN now() ELSE deleted_at END
 WHERE id = %(id)s AND lease_token = %(token)s AND last_seq = %(first)s - 1
"""
_COMMITTED = "SELECT lease_token = %(token)s AND last_seq >= %(last)s FROM conversations WHERE id = %(id)s"


def new_token() -> str:
    return uuid.uuid4().hex


def instance_name() -> str:
    """``host:pid:random``: unique per store, and names a process that ``is_dead`` can check on this host."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def is_dead(writer: str) -> bool:
    """Whether ``writer`` names a process of this host that is gone (killed: its leases need not be waited out)."""
    host, _, rest = writer.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def acquire(conn: Conn, cid: str, me: str, token: str, lease: float, dead: str | None = None) -> int:
    """Take the conversation's write lease; returns its last committed seq (0 for a new conversation). ``dead``
    names an instance known to be gone elsewhere (its attempt leases expired): its write lease is taken over."""
    params = {"id": cid, "me": me, "token": token, "lease": lease}
    row = conn.execute(_ACQUIRE, params).fetchone()
    if row is not None:
        return int(str(row[0]))
    why = conn.execute("SELECT deleted, writer, lease_token FROM conversations WHERE id = %s", (cid,)).fetchone()
    if why is not None and why[0]:
        raise ConversationDeletedError(cid)
    writer = str(why[1]) if why and why[1] else None
    if why is not None and writer is not None and (writer == dead or is_dead(writer)):
        row = conn.execute(_TAKE_OVER, {**params, "old": why[2]}).fetchone()
        if row is not None:
            return int(str(row[0]))
    raise ConversationBusyError(cid, writer)


def fence(
    conn: Conn, cid: str, token: str, seqs: tuple[int, int], lease: float, *, title: str | None, deleted: bool
) -> Literal["ok", "done", "lost"]:
    """Record ``seqs[1]`` as the conversation's last seq if this token still holds its lease and its last seq is
    ``seqs[0] - 1`` (and renew the lease); ``"done"``: this batch is already committed; ``"lost"``: the lease."""
    first, last = seqs
    params = {"id": cid, "token": token, "first": first, "last": last, "lease": lease, "title": title}
    if conn.execute(_FENCE, {**params, "deleted": deleted}).rowcount == 1:
        return "ok"
    row = conn.execute(_COMMITTED, params).fetchone()
    return "done" if row is not None and row[0] else "lost"


def release(conn: Conn, tokens: list[str]) -> None:
    if tokens:
        conn.execute(
            "UPDATE conversations SET writer = NULL, lease_token = NULL, writer_until = NULL "
            "WHERE lease_token = ANY(%s)",
            (tokens,),
        )
