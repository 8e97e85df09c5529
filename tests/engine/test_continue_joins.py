"""Continue never duplicates text and never continues the wrong answer (issue 40; peers: LM Studio #2058, open-webui
#21564): after a Stop, a length cut, a previous Continue and an Edit, in every dialect, the Continue's request
carries the prefix exactly once (Anthropic's prefill, or the prefix then a request to go on), and the answer the
ledger's state, the Markdown export and the next request make of it is the prefix then the continuation, joined
once. A property runs random cut points (inside a grapheme, inside ``**bold**``, inside a code fence) through it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.commands.engine import Engine, InputRejected
from ledger.continuation import NOT_LATEST, joined, shown_text
from tests.support.dialects import DIALECTS
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.export import conversation_markdown

WORDS = " ".join(f"w{n}" for n in range(200))
EDITED = " ".join(f"e{n}" for n in range(200))
MORE = " ".join(f"m{n}" for n in range(200))
REST = " and that is the rest."


def the_answer(engine: Engine, cid: str, message_id: str) -> str:
    """The whole answer as the page and Copy have it: the selected attempt after the attempts it continues."""
    conv = engine.conversation(cid)
    assert conv is not None
    return shown_text(conv, conv.attempts[conv.messages[message_id].selected_attempt_id or ""])


def prefix_sent_once(messages: list[dict[str, Any]], prefix: str, prefill: bool) -> None:
    """The Continue's request holds ``prefix`` in exactly one message, its last assistant content: the last message
    (a prefill, without trailing whitespace) or the one before the request to go on."""
    texts = [str(m.get("content")) for m in messages]  # (structured content as its repr: the prefix is in it too)
    holding = [n for n, text in enumerate(texts) if prefix.rstrip() in text]
    assert len(holding) == 1, f"the prefix is in {len(holding)} messages: {messages}"
    assert sum(text.count(prefix.rstrip()) for text in texts) == 1, "the prefix is repeated inside a message"
    last = len(messages) - 1 if prefill else len(messages) - 2
    assert holding == [last] and messages[last]["role"] == "assistant", messages
    assert messages[last]["content"] == (prefix.rstrip() if prefill else prefix)


def says_it_once(engine: Engine, cid: str, message_id: str, expected: str) -> None:
    """The ledger's state and the Markdown export both give the answer as ``expected``, once."""
    assert the_answer(engine, cid, message_id) == expected
    conv = engine.conversation(cid)
    assert conv is not None
    markdown = conversation_markdown(conv)
    assert markdown.count(expected.strip()) == 1, markdown


async def stopped(engine: Engine, cid: str, message_id: str, text: str) -> str:
    """Wait until the answer ``message_id`` streamed a few chunks of ``text`` (planned by the caller), then Stop it;
    its interrupted text."""
    await wait_until(lambda: current_attempt(engine, cid, message_id).chunks_rendered >= 4)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, message_id)
    assert attempt.status == "interrupted" and text.startswith(attempt.text) and attempt.text
    return attempt.text


async def continued(engine: Engine, cid: str, message_id: str, upstream: ScriptedUpstream, rest: str) -> None:
    upstream.plan(Behavior(text=rest))
    await engine.continue_answer(cid, message_id)
    await finished(engine, cid)
    assert current_attempt(engine, cid, message_id).status == "complete"


def a_continue_is_one_answer(upstream: ScriptedUpstream, prefix: str) -> str:
    """The Continue just ended sent ``prefix`` once; the answer it must make of it (continued with ``REST``)."""
    prefix_sent_once(upstream.last.messages, prefix, engines_prefill(upstream.last.dialect))
    return joined(prefix, REST)


def engines_prefill(dialect: str) -> bool:
    return dialect == "anthropic"  # (engine.provider.calls.takes_prefill: the one bare-prefill dialect here)


async def next_request_sends_it_once(engine: Engine, cid: str, upstream: ScriptedUpstream, answer: str) -> None:
    sent = await follow_up_is_accepted(engine, cid, upstream)
    assistant = [m["content"] for m in sent if m["role"] == "assistant"]
    assert assistant[-1] == answer and sum(text.count(answer.strip()) for text in assistant) == 1, assistant


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_continue_after_a_stop_sends_the_prefix_once_and_the_answer_is_prefix_then_continuation(
    engines: EngineFactory, upstream: ScriptedUpstream, dialect: str
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, message_id = await engine.send(cid, "count for me")
    prefix = await stopped(engine, cid, message_id, WORDS)
    await continued(engine, cid, message_id, upstream, REST)
    answer = a_continue_is_one_answer(upstream, prefix)
    says_it_once(engine, cid, message_id, answer)
    await next_request_sends_it_once(engine, cid, upstream, answer)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_continue_after_a_length_cut_sends_the_whole_cut_answer_once_and_adds_only_the_continuation(
    engines: EngineFactory, upstream: ScriptedUpstream, dialect: str
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="A long answer that the limit cut", cut=True))
    _, message_id = await engine.send(cid, "tell me everything")
    await finished(engine, cid)
    assert current_attempt(engine, cid, message_id).finish_reason == "length"
    await continued(engine, cid, message_id, upstream, REST)
    answer = a_continue_is_one_answer(upstream, "A long answer that the limit cut")
    says_it_once(engine, cid, message_id, answer)
    await next_request_sends_it_once(engine, cid, upstream, answer)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_continue_after_a_stopped_continue_sends_both_parts_once_as_one_prefix(
    engines: EngineFactory, upstream: ScriptedUpstream, dialect: str
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    _, message_id = await engine.send(cid, "count for me")
    first = await stopped(engine, cid, message_id, WORDS)
    upstream.plan(Behavior(text=" " + MORE, chunk_delay=0.02))
    await engine.continue_answer(cid, message_id)
    second = await stopped(engine, cid, message_id, " " + MORE)
    prefix = joined(first, second)
    assert the_answer(engine, cid, message_id) == prefix
    await continued(engine, cid, message_id, upstream, REST)
    answer = a_continue_is_one_answer(upstream, prefix)
    assert sum(str(m["content"]).count(first.rstrip()) for m in upstream.last.messages) == 1, "first part twice"
    says_it_once(engine, cid, message_id, answer)
    await next_request_sends_it_once(engine, cid, upstream, answer)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_continue_after_an_edit_continues_the_edited_questions_answer_never_the_old_branch(
    engines: EngineFactory, upstream: ScriptedUpstream, dialect: str
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.02))
    question, old_id = await engine.send(cid, "count for me")
    old = await stopped(engine, cid, old_id, WORDS)
    upstream.plan(Behavior(text=EDITED, chunk_delay=0.02))
    _, new_id = await engine.edit(cid, question, "count for me with e")
    edited = await stopped(engine, cid, new_id, EDITED)
    with pytest.raises(InputRejected) as refused:  # the old branch's answer is not the one shown last
        await engine.continue_answer(cid, old_id)
    assert str(refused.value) == NOT_LATEST
    await continued(engine, cid, new_id, upstream, REST)
    sent = upstream.last.messages
    assert old.rstrip() not in str(sent) and "count for me with e" in str(sent), sent
    answer = a_continue_is_one_answer(upstream, edited)
    says_it_once(engine, cid, new_id, answer)
    assert current_attempt(engine, cid, old_id).text == old, "the old branch is left as it was"
    await next_request_sends_it_once(engine, cid, upstream, answer)


#: Texts whose cut may fall inside a grapheme (a combining accent, a ZWJ emoji, a CJK run), inside ``**bold**``
#: or inside a code fence; no whitespace run (the one join rule, ``joined``, keeps whitespace at the join once).
PIECES = st.sampled_from(
    [
        "word",
        "**bold words**",
        "```py\nx = 1\n```",
        "e\u0301t\u00e9",
        "\U0001f469\u200d\U0001f4bb",
        "\u6f22\u5b57",
        "`code`",
        "\u00fcber",
        "a\nb",
        "1.5",
    ]  # fmt: skip
)
TEXTS = st.lists(PIECES, min_size=2, max_size=6).map(lambda pieces: " ".join(["Q7", *pieces]))  # Q7: sent once


def one_engine_per_dialect(engines: EngineFactory, dialect: str) -> Engine:
    """The engine calling in ``dialect``, made on the first example that needs it (its own data folder)."""
    made: dict[str, Engine] = engines.__dict__.setdefault("by_dialect", {})
    if dialect not in made:
        engines.dialect = dialect
        made[dialect] = engines(engines.tmp_path / dialect)
    return made[dialect]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(full=TEXTS, where=st.floats(0.05, 0.95), after_a_space=st.booleans())
async def test_a_length_cut_anywhere_then_continue_makes_the_whole_text_once_with_and_without_a_prefill(
    engines: EngineFactory, upstream: ScriptedUpstream, full: str, where: float, after_a_space: bool
) -> None:
    cut = max(3, min(len(full) - 1, int(len(full) * where)))  # (after "Q7": the prefix is in no other message)
    if after_a_space:  # the prefix ends with the space a prefill is sent without
        cut = full.index(" ", cut - 1) + 1 if " " in full[cut - 1 : -1] else cut
    prefix, rest = full[:cut], full[cut:]
    for dialect in ("openai", "anthropic"):
        engine = one_engine_per_dialect(engines, dialect)
        cid = engine.create_conversation()
        upstream.plan(Behavior(text=prefix, cut=True, chunk_delay=0))
        _, message_id = await engine.send(cid, "write it")
        await finished(engine, cid)
        assert current_attempt(engine, cid, message_id).text == prefix
        # the model goes on where its prefix stopped: after a prefill, sent without trailing whitespace, with it
        prefill = engines_prefill(dialect)
        upstream.plan(Behavior(text=full[len(prefix.rstrip()) :] if prefill else rest, chunk_delay=0))
        await engine.continue_answer(cid, message_id)
        await finished(engine, cid)
        prefix_sent_once(upstream.last.messages, prefix, prefill)
        assert the_answer(engine, cid, message_id) == full
        conv = engine.conversation(cid)
        assert conv is not None and full.strip() in conversation_markdown(conv)
