"""One conversation's part of a batch transaction on PostgreSQL: the lease's fence, the rows with their epochs, the
notification; and what a refusal by the fencing trigger (migration 0003) says.

Guarantees:
- ``write_part`` runs under its own savepoint inside the caller's transaction, so a refused part writes nothing and
  never takes the batch's other conversations down. It returns ``"ok"`` (written), ``"done"`` (already committed
  by an earlier try whose acknowledgement was lost: nothing written twice), ``"lost"`` (the write lease is
  another's: nothing written) or a ``Refused`` (the database refused a row's epoch: nothing written).
- ``write_parts`` writes every part of a batch so, in the caller's transaction: the conversations whose lease was
  lost, and those refused.
- ``catch_up`` reads a conversation's rows beyond a seq (after giving a lease back, when asked).
- ``Refused.detail`` is the trigger's ``"<attempt id> <epoch>"`` of the first refused attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import psycopg

import store.postgres.leases as pg_leases
from ledger.events import AnyEvent, Created, Deleted, Renamed
from store.postgres.follow import CHANNEL
from store.postgres.pool import Conn
from store.postgres.rows import SELECT, column_text, copy_rows

Rows = list[tuple[object, ...]]
FENCED = "LCF01"  # the SQLSTATE the fencing trigger raises


@dataclass(frozen=True, slots=True)
class Refused:
    detail: str


def write_part(
    conn: Conn, cid: str, events: list[AnyEvent], *, token: str, epochs: list[int | None], lease: float, me: str
) -> Literal["ok", "done", "lost"] | Refused:
    titles = [e.title for e in events if isinstance(e, Created | Renamed)]
    deleted = isinstance(events[-1], Deleted)
    last = events[-1].seq
    title = "" if deleted else (column_text(titles[-1]) if titles else None)
    try:
        with conn.transaction():
            fenced = pg_leases.fence(conn, cid, token, (events[0].seq, last), lease, title=title, deleted=deleted)
            if fenced != "ok":
                return fenced
            copy_rows(conn, events, me, epochs)
            if deleted:
                conn.execute("DELETE FROM events WHERE conversation_id = %s AND seq < %s", (cid, last))
            conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{cid} {last}"))
    except psycopg.Error as exc:
        if exc.sqlstate != FENCED:
            raise
        return Refused(exc.diag.message_detail or "")
    return "ok"


def write_parts(
    conn: Conn, batch: dict[str, list[AnyEvent]], tokens: dict[str, str], epochs: dict[str, list[int | None]], *,
    lease: float, me: str,
) -> tuple[list[str], dict[str, Refused]]:  # fmt: skip
    lost: list[str] = []
    refused: dict[str, Refused] = {}
    for cid, events in batch.items():
        done = write_part(conn, cid, events, token=tokens[cid], epochs=epochs[cid], lease=lease, me=me)
        if done == "lost":
            lost.append(cid)
        elif isinstance(done, Refused):
            refused[cid] = done
    return lost, refused


def catch_up(conn: Conn, cid: str, known: int, last: int = 0, *, release: str | None = None) -> tuple[int, Rows]:
    """``last`` and the conversation's rows beyond ``known`` (after giving back the lease ``release``, if any)."""
    if release is not None:
        pg_leases.release(conn, [release])
    return last, conn.execute(f"{SELECT} WHERE conversation_id = %s AND seq > %s ORDER BY seq", (cid, known)).fetchall()


def lost_message(cid: str, count: int) -> str:
    return (
        f"Conversation {cid}: {count} event(s) were not saved: this instance stalled past its write lease and "
        "another instance took the conversation over."
    )


def refusal_message(cid: str, count: int, attempts: list[str], why: Refused) -> str:
    return (
        f"Conversation {cid}: {count} event(s) of answer(s) {', '.join(attempts) or '-'} were refused by the "
        f"database (attempt and epoch {why.detail or '?'}): another instance took the answer over or ended it "
        "while this one was not answering."
    )
