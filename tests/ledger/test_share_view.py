"""A share link's content (issue 36): the owner's view of the same path replayed to the snapshot's event, minus what
the sharer did not tick; no event after the snapshot ever reaches it. And the reducer's record of the links."""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.continuation import shown_text
from ledger.events.core import AnyEvent, Attachment, Chunk, Created, Submitted
from ledger.events.share import ShareCreated, ShareOpened, ShareRevoked, ShareUpdated
from ledger.reducer import replay
from ledger.share_view import SharedView, view_of
from ledger.shares import holds
from ledger.tree import selected_path
from tests.support.random_sessions import CONV, build_events
from tests.support.session_steps import lived_sessions, steps

MARK = re.compile(r"<a\d+:\d+:(\d+)>")  # a chunk's text in the random sessions names its seq
FILE = Attachment(sha256="f" * 64, name="secret-plan.pdf", media_type="application/pdf", size=10)
sessions = st.one_of(lived_sessions, st.lists(steps, max_size=40).map(lambda plan: [("submit", 0), *plan]))


def _with_files(events: list[AnyEvent]) -> list[AnyEvent]:
    """The first user message carries a file (the random sessions' ones carry none)."""
    return [replace(e, attachments=(FILE,)) if isinstance(e, Submitted) and e.turn == 1 else e for e in events]


def _texts(view: SharedView) -> list[str]:
    out = []
    for m in view.messages:
        out.append(m.text)
        for a in m.attempts:
            for text, calls in a.steps:
                out.append(text)
                out += [c.arguments or "" for c in calls] + [c.result or "" for c in calls]
    return out


@settings(max_examples=300, deadline=None)
@given(sessions, st.data())
def test_a_share_is_the_owners_view_at_its_snapshot_and_no_later_event_reaches_it(
    plan: list[tuple], data: st.DataObject
) -> None:
    events = _with_files(build_events(plan))
    at = data.draw(st.integers(1, len(events)), label="snapshot")
    full = view_of(events, at, tools=True, attachments=True)
    assert full == view_of(events[:at], at, tools=True, attachments=True), "an event after the snapshot mattered"
    owner = replay(events[:at]).conversations[CONV]
    assert full is not None
    shown = [m for m in selected_path(owner) if owner.messages[m].role == "user" or full_answer(owner, m)]
    assert [m.message_id for m in full.messages] == shown, "the path the owner saw then"
    for m in full.messages:
        if m.role == "user":
            assert (m.text, m.files) == (owner.messages[m.message_id].text, owner.messages[m.message_id].attachments)
            continue
        message = owner.messages[m.message_id]
        ids = [a for a in message.attempt_ids if owner.attempts[a].purpose != "title"]
        assert [a.attempt_id for a in m.attempts] == ids, "every attempt, browsable"
        assert message.selected_attempt_id not in ids or m.attempts[m.shown].attempt_id == message.selected_attempt_id
        for a in m.attempts:
            state = owner.attempts[a.attempt_id]
            assert a.status == state.status and a.cancel_source == state.cancel_source, "interrupted as on the page"
            assert "".join(t for t, _ in a.steps) == shown_text(owner, state), "its text as the page shows it"
    later = {e.seq for e in events[at:] if isinstance(e, Chunk)}
    assert not {int(s) for t in _texts(full) for s in MARK.findall(t)} & later, "a later chunk's text appeared"
    bare = view_of(events, at, tools=False, attachments=False)
    assert bare is not None and bare == strip(full), "the view minus what was not ticked"


def full_answer(conv: object, message_id: str) -> bool:
    message = conv.messages[message_id]
    return any(conv.attempts[a].purpose != "title" for a in message.attempt_ids if a in conv.attempts)


def strip(view: SharedView) -> SharedView:
    """``view`` without tool arguments and results, and without files (only how many there were)."""
    messages = []
    for m in view.messages:
        attempts = tuple(
            a._replace(
                steps=tuple((t, tuple(c._replace(arguments=None, result=None) for c in cs)) for t, cs in a.steps)
            )
            for a in m.attempts
        )
        messages.append(m._replace(files=(), files_left_out=len(m.files), attempts=attempts))
    return view._replace(messages=tuple(messages))


@settings(max_examples=200, deadline=None)
@given(sessions)
def test_the_reducer_records_each_links_life_and_never_reopens_a_revoked_one(plan: list[tuple]) -> None:
    events = build_events(plan)
    conv = replay(events).conversations[CONV]
    for share_id, share in conv.shares.items():
        mine = [e for e in events if getattr(e, "share_id", None) == share_id]
        made = next(e for e in mine if isinstance(e, ShareCreated))
        revoked = next((e for e in mine if isinstance(e, ShareRevoked) and e.seq > made.seq), None)
        assert share.created_ts == made.ts and share.token_sha256 == made.token_sha256
        assert share.revoked_ts == (revoked.ts if revoked else None)
        moved = [e for e in mine if isinstance(e, ShareUpdated) and e.seq > made.seq]
        moved = [e for e in moved if revoked is None or e.seq < revoked.seq]
        assert share.at_seq == (moved[-1].at_seq if moved else made.at_seq)
        opens = sum(e.count for e in mine if isinstance(e, ShareOpened) and e.seq > made.seq)
        assert share.opens == opens, "counted, not per viewer"
        assert not holds(share, "2026-12-01T00:00:00.000+00:00") or revoked is None
    without = [e for e in events if not hasattr(e, "share_id")]
    plain = replay(without).conversations.get(CONV)
    assert plain is not None and conv._replace(shares=plain.shares, last_seq=0) == plain._replace(last_seq=0), (
        "a link changes nothing else of the chat"
    )


def test_a_share_of_a_chat_that_did_not_exist_yet_is_nothing() -> None:
    made = Created(conversation_id=CONV, seq=1, ts="2026-11-30T08:00:00.000+00:00")
    assert view_of([made], 0, tools=True, attachments=True) is None
    assert view_of([made], 1, tools=True, attachments=True) == SharedView("", 1, made.ts, ())
