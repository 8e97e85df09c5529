"""Compaction (docs/ledger.md, compaction): for random histories with tool turns and interrupted turns, the turns
a compaction keeps are whole (no tool call without its one result, an interrupted prefix as the user saw it) and
fit the window; a branch that does not pass through the summarized turns is not affected."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from demo.agent import history_problem
from ledger.compaction import SUMMARY_PREFIX, chain_key, choose_cut, cut_points, effective
from ledger.events.core import (
    AnyEvent,
    Cancelled,
    CancelRequested,
    Chunk,
    Done,
    Failed,
    Persisted,
    Started,
    StepStarted,
    Submitted,
    ToolCalled,
    ToolResult,
)
from ledger.history import as_messages, chain_history, model_history
from ledger.reducer import replay
from ledger.state import ConversationState
from ledger.tree import selected_path

C = "c"
# One turn: the user's words, then how its answer went (with how many tool steps and how long its text is).
turns = st.lists(
    st.tuples(
        st.integers(1, 60),
        st.sampled_from(["complete", "tools", "stopped_in_tools", "stopped", "failed", "empty"]),
        st.integers(0, 3),
        st.integers(0, 120),
    ),
    min_size=1,
    max_size=10,
)


class Ledger:
    def __init__(self) -> None:
        self.events: list[AnyEvent] = []

    def add(self, cls: type, **fields: object) -> None:
        self.events.append(cls(seq=len(self.events) + 1, ts="", conversation_id=C, **fields))

    def turn(self, n: int, words: int, how: str, steps: int, chars: int) -> None:
        user, msg, att = f"u{n}", f"m{n}", f"a{n}"
        self.add(Submitted, message_id=user, turn=n, text=" ".join(["word"] * words), parent=f"a{n - 1}" if n else None)
        self.add(Started, attempt_id=att, message_id=msg, user_message_id=user, turn=n, model="m")
        seq = 0
        for step in range(1, (steps if how in ("tools", "stopped_in_tools") else 0) + 1):
            self.add(StepStarted, attempt_id=att, step=step)
            self.add(Chunk, attempt_id=att, request_id="r", chunk_seq=seq, text=f"step {step} " * 3)
            seq += 1
            for k in range(2):
                call = f"{att}-{step}-{k}"
                self.add(ToolCalled, attempt_id=att, step=step, call_id=call, name="t", arguments="{}")
                self.add(ToolResult, attempt_id=att, call_id=call, status="ok", content="r" * (chars + 1))
        if steps and how in ("tools", "stopped_in_tools"):
            self.add(StepStarted, attempt_id=att, step=steps + 1)
        if how != "empty":
            self.add(Chunk, attempt_id=att, request_id="r", chunk_seq=seq, text="x" * chars + f"<{att}>")
        if how in ("stopped", "stopped_in_tools", "empty"):
            self.add(CancelRequested, attempt_id=att, source="user")
            self.add(Cancelled, attempt_id=att, source="user")
        elif how == "failed":
            self.add(Failed, attempt_id=att, error_type="server", summary="boom")
        else:
            self.add(Done, attempt_id=att, request_id="r")
        self.add(Persisted, attempt_id=att, message_id=msg, status="complete", text="")

    def compact(self, through: str, summary: str, name: str = "k") -> None:
        att = f"{name}-a"
        self.add(Started, attempt_id=att, message_id=name, user_message_id="", turn=0, model="m",
                 purpose="compaction", through=through)  # fmt: skip
        self.add(Chunk, attempt_id=att, request_id="r", chunk_seq=0, text=summary)
        self.add(Done, attempt_id=att, request_id="r")
        self.add(Persisted, attempt_id=att, message_id=name, status="complete", text=summary)

    def conv(self) -> ConversationState:
        return replay(self.events).conversations[C]


def cost(messages: list[dict[str, object]]) -> int:
    """A stand-in token counter: 4 characters a token, 4 tokens a message."""
    return sum(len(str(m.get("content") or "")) // 4 + 4 + 10 * len(str(m.get("tool_calls") or "")) for m in messages)


@settings(max_examples=300, deadline=None)
@given(turns, st.integers(40, 600))
def test_the_kept_turns_never_split_a_tool_call_from_its_result_and_always_fit(plan: list, window: int) -> None:
    book = Ledger()
    for n, (words, how, steps, chars) in enumerate(plan):
        book.turn(n, words, how, steps, chars)
    conv = book.conv()
    chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
    starts = [0, *cut_points(conv, chain), len(chain)]
    groups = [chain[a:b] for a, b in zip(starts, starts[1:], strict=False)]
    costs = [cost(as_messages(chain_history(conv, g))) for g in groups]
    summary = "the summary " * 3
    fixed = cost([{"role": "system", "content": f"{SUMMARY_PREFIX}\n\n{summary}"}])
    if len(groups) < 2:
        return  # one turn: nothing before it to summarize
    cut = choose_cut(costs[:-1], fixed + costs[-1], window)  # the newest turn is the one to be sent: kept
    assert 1 <= cut < len(groups), "a compaction summarizes something and keeps the newest turn"
    covered = sum(len(g) for g in groups[:cut])
    book.compact(chain_key(*chain[covered - 1]), summary)
    after = book.conv()
    sent = as_messages(model_history(after))
    kept = as_messages(chain_history(after, chain[covered:]))
    assert sent[0] == {"role": "system", "content": f"{SUMMARY_PREFIX}\n\n{summary}"}
    assert sent[1:] == kept, "the turns kept are sent whole, interrupted prefixes exactly as shown"
    assert history_problem(sent) is None, sent
    if costs[-1] + fixed <= window:
        assert cost(sent) <= window, "the kept turns and the summary fit the window"


def test_an_edit_of_a_summarized_message_is_on_a_branch_the_summary_does_not_reach() -> None:
    book = Ledger()
    for n in range(3):
        book.turn(n, 5, "complete", 0, 10)
    book.compact("a1", "summary of the first two turns")
    conv = book.conv()
    assert model_history(conv)[0].content == f"{SUMMARY_PREFIX}\n\nsummary of the first two turns"
    assert [e.message_id for e in model_history(conv)[1:]] == ["u2", "m2"]
    book.add(Submitted, message_id="u9", turn=9, text="an edit of the first question", edit_of="u0")
    history = model_history(book.conv())
    assert [(e.role, e.content) for e in history] == [("user", "an edit of the first question")]


def test_a_compaction_that_did_not_complete_leaves_the_history_as_it_was() -> None:
    book = Ledger()
    for n in range(3):
        book.turn(n, 5, "complete", 0, 10)
    before = model_history(book.conv())
    book.add(Started, attempt_id="k-a", message_id="k", user_message_id="", turn=0, model="m",
             purpose="compaction", through="a1")  # fmt: skip
    book.add(Chunk, attempt_id="k-a", request_id="r", chunk_seq=0, text="half a summ")
    book.add(CancelRequested, attempt_id="k-a", source="user")
    book.add(Cancelled, attempt_id="k-a", source="user")
    conv = book.conv()
    assert model_history(conv) == before
    assert conv.attempts["k-a"].status == "interrupted"
    assert selected_path(conv) == selected_path(replay(book.events[:-4]).conversations[C]), "the screen is the same"
    assert effective(conv, [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]) is None


def test_a_compaction_request_is_one_user_message_with_the_turns_it_summarizes() -> None:
    book = Ledger()
    for n in range(3):
        book.turn(n, 2, "tools", 1, 5)
    book.add(Started, attempt_id="k-a", message_id="k", user_message_id="", turn=0, model="m",
             purpose="compaction", through="a1")  # fmt: skip
    request = as_messages(model_history(book.conv(), until_message_id="k"))
    assert len(request) == 1 and request[0]["role"] == "user"
    text = str(request[0]["content"])
    assert text.startswith("Summarize the earlier conversation below")
    assert "<a0>" in text and "<a1>" in text and "<a2>" not in text and "calls t({})" in text
