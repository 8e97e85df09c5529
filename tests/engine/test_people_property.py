"""Issue 35's property over the real engine (TinyDB files, litellm to the scripted upstream): for random sequences
of commands by several people, every event a command appends names the person who gave it, and nothing a person
can reach (the list, search, the message search off the loop, every conversation read, a chat opened by id, an
export) holds another person's conversation.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine.commands import read_as_admin
from engine.people import Viewer, acting_as
from ledger.presets import Preset
from tests.support.engine import EngineFactory
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

PEOPLE = ("local:ann", "local:ben", "local:cat")
WORDS = ("plan", "budget", "secret", "launch", "notes")
COMMANDS = ("new", "send", "rename", "branch", "retry", "preset", "read")
ADMIN = "local:root"  # reads with --admin-can-read: on the owner's record
STEP = st.tuples(st.sampled_from(COMMANDS), st.sampled_from(PEOPLE), st.sampled_from(WORDS))
_RUN = itertools.count()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=7))
@example(steps=[("send", "local:ann", "plan"), ("branch", "local:ann", "plan"), ("send", "local:ben", "plan")])
@example(steps=[("send", "local:ann", "plan"), ("retry", "local:ann", "plan"), ("rename", "local:ann", "plan")])
async def test_every_event_names_who_acted_and_nobody_reaches_anothers_conversation(
    engines: EngineFactory, upstream: ScriptedUpstream, steps: list[tuple[str, str, str]]
) -> None:
    engine = engines(engines.tmp_path / f"run{next(_RUN)}")
    owned: dict[str, list[str]] = {p: [] for p in PEOPLE}
    presets: dict[str, set[str]] = {p: set() for p in PEOPLE}
    reads: dict[str, int] = {}
    for command, person, word in steps:
        with acting_as(person):  # as the front door and the socket's event check set it for a person's command
            mine = owned[person]
            if command == "new" or not mine:
                mine.append(engine.create_conversation())
            if command == "send":
                upstream.plan(Behavior(text=f"answer about {word}"))
                cid = mine[-1]
                await engine.submit(cid, f"{person} asks about {word}")
                await wait_until(lambda: not engine.is_streaming(cid), what="the answer's end")  # noqa: B023
            elif command == "retry" and any(e.KIND == "submitted" for e in engine.store.events(mine[-1])):
                upstream.plan(Behavior(text=f"again about {word}"))
                cid = mine[-1]
                await engine.retry(cid)
                await wait_until(lambda: not engine.is_streaming(cid), what="the retry's end")  # noqa: B023
            elif command == "rename":
                engine.rename(mine[-1], f"{word} of {person}")
            elif command == "preset":
                me = Viewer(team=True, person=person)
                presets[person].add(engine.presets.save(Preset(preset_id="", name=f"{word} {person}"), me).preset_id)
            elif command == "read":
                with acting_as(ADMIN):
                    assert await read_as_admin(engine, mine[-1], ADMIN, "root") is not None
                reads[mine[-1]] = reads.get(mine[-1], 0) + 1
            elif command == "branch":
                conv = engine.conversation(mine[-1])
                if conv is not None and conv.message_ids:  # at the last message: its chain is copied
                    mine.append(engine.branch(mine[-1], conv.message_ids[-1])[0])
    for person, cids in owned.items():
        for cid in cids:
            events = engine.store.events(cid)
            assert [e.owner for e in events if e.KIND == "created"] == [person]
            assert {e.actor for e in events if e.KIND == "submitted"} <= {person}, "a branch's copy keeps its sender"
            commands = [e for e in events if e.KIND in ("renamed", "branched") or getattr(e, "why", "") == "user"]
            assert {getattr(e, "actor", None) for e in commands} <= {person}, "each command names who gave it"
            assert [e.actor for e in events if e.KIND == "read_by"] == [ADMIN] * reads.get(cid, 0), "every read, once"
        viewer = Viewer(team=True, person=person)
        others = {c for p, cs in owned.items() if p != person for c in cs}
        assert {s.conversation_id for s in engine.summaries(viewer=viewer)} == set(cids)
        assert {c.conversation_id for c in engine.read_conversations(viewer=viewer)} == set(cids)
        for word in WORDS:
            assert not {h.conversation_id for h in engine.search(word, viewer=viewer)} & others
            assert not {h.conversation_id for h in await engine.search_async(word, viewer=viewer)} & others
        for cid in others:
            assert await engine.load(cid, viewer) is None and await engine.exported(cid, viewer) is None
        assert {p.preset_id for p in engine.presets.all(viewer) if p.owner is not None} == presets[person]
