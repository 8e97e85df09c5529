"""The reducer's random sessions made into events, for the property tests of the ledger (``tests/ledger``).

- ``build_events(plan)`` turns a plan (a list of steps drawn from ``tests.support.session_steps.steps``) into the
  events of conversation ``CONV`` the way an appender would: ids and seqs stamped outside the reducer, a step that
  has nothing to act on (no attempt yet, no message to edit) skipped. Every error type the ledger knows
  (``ERROR_TYPES``) comes up in failures.
- ``states_along(events)`` is every state from the empty one, one event at a time (``ledger.reducer.reduce``).
"""

from __future__ import annotations

from typing import get_args

from ledger.events.core import (
    AnyEvent,
    ApprovalAsked,
    ApprovalGiven,
    Attached,
    Branched,
    Cancelled,
    CancelRequested,
    Chunk,
    Detached,
    Done,
    ErrorType,
    Failed,
    GrantRevoked,
    Persisted,
    QuestionAnswered,
    QuestionAsked,
    Recovered,
    RequestSent,
    Retrying,
    Selected,
    StaleChunk,
    StaleToolResult,
    Started,
    StepFinished,
    StepStarted,
    Submitted,
    TextRef,
    ToolAwaitingApproval,
    ToolCalled,
    ToolCallStarted,
    ToolDispatched,
    ToolProgress,
    ToolResult,
    TurnMetrics,
    UpstreamClosed,
    Usage,
    VersionSelected,
)
from ledger.events.title import Titled
from ledger.reducer import reduce
from ledger.state import EMPTY_STATE, State
from tests.support.queue_steps import QUEUE_STEPS, queue_event
from tests.support.server_steps import SERVER_STEPS, server_event
from tests.support.share_steps import SHARE_STEPS, share_event

CONV = "c1"
#: every error type the ledger knows (the loop guard's ``tool_loop`` among them): a failure of any kind reduces alike
ACTORS = (None, "local:ann", "local:ben")  # who sends a message: nobody named (personal mode), or a person
ERROR_TYPES = [value for part in get_args(ErrorType) for value in (get_args(part) or (part,))]


def build_events(plan: list[tuple]) -> list[AnyEvent]:
    """Turn a random plan into events the way an appender would: ids and seqs stamped outside the reducer."""
    events: list[AnyEvent] = []
    attempts: list[tuple[str, str]] = []  # (attempt_id, message_id)
    chunk_seq: dict[str, int] = {}
    steps_of: dict[str, int] = {}
    users: list[str] = []
    turn = 0

    def add(event: AnyEvent) -> None:
        events.append(event)

    for step in plan:
        kind = step[0]
        seq = len(events) + 1
        ts = f"2026-11-30T08:00:{seq % 60:02d}.000+00:00"
        base = {"seq": seq, "ts": ts, "conversation_id": CONV}
        if kind in QUEUE_STEPS and kind != "send_queued":
            add(queue_event(step, base))
            continue
        if kind in SHARE_STEPS:  # a share link's life: never the chat's activity (``ledger.shares``)
            add(share_event(step, base))
            continue
        if kind in ("submit", "edit", "send_queued"):
            edit_of = users[step[1] % len(users)] if kind == "edit" and users else None
            if kind == "edit" and edit_of is None:
                continue
            turn += 1
            user, msg, att = f"u{turn}", f"m{turn}", f"a{len(attempts)}"
            users.append(user)
            queue_id = f"q{step[1]}" if kind == "send_queued" else None
            whole = _whole(f"q {turn}") if step[1] % 3 == 0 else None  # a text over the bound: kept as a blob
            actor = ACTORS[step[1] % len(ACTORS)]  # personal mode (None) or a person of team mode
            add(Submitted(**base, message_id=user, turn=turn, text=f"q {turn}", edit_of=edit_of, queue_id=queue_id,
                          whole=whole, actor=actor))  # fmt: skip
            add(
                Started(
                    **base | {"seq": seq + 1},
                    attempt_id=att,
                    message_id=msg,
                    user_message_id=user,
                    turn=turn,
                    model="x",
                )
            )
            add(RequestSent(**base | {"seq": seq + 2}, attempt_id=att, request_id=f"r{att}", model="x"))
            attempts.append((att, msg))
            continue
        if not attempts:
            continue
        att, msg = attempts[step[1] % len(attempts)]
        if kind == "compact":  # a compaction reaching an attempt (or its user message), running like any attempt
            new, side = f"a{len(attempts)}", f"k{len(attempts)}"
            through = att if step[2] else users[-1]
            add(Started(**base, attempt_id=new, message_id=side, user_message_id="", turn=turn, model="x",
                        purpose="compaction", through=through))  # fmt: skip
            attempts.append((new, side))
        elif kind == "title":  # a title after an answer: a side attempt like a compaction's, its request its own
            new, side = f"a{len(attempts)}", f"t{len(attempts)}"
            add(Started(**base, attempt_id=new, message_id=side, user_message_id="", turn=turn, model="x",
                        purpose="title", through=att))  # fmt: skip
            attempts.append((new, side))
        elif kind == "titled":  # replacing the first message's title, or one it no longer has (a rename won)
            add(Titled(**base, title=f"T{seq}", replaces="q 1" if step[2] else "T0", from_attempt=att))
        elif kind == "retry":
            new = f"a{len(attempts)}"
            add(Retrying(**base, message_id=msg, previous_attempt_id=att, attempt_id=new))
            add(
                Started(
                    **base | {"seq": seq + 1},
                    attempt_id=new,
                    message_id=msg,
                    user_message_id="?",
                    turn=turn,
                    model="x",
                    trigger="retry",
                    purpose={"k": "compaction", "t": "title"}.get(msg[0], "answer"),  # a side one is retried as one
                    preset_id=f"preset{len(attempts) % 2}",  # Retry with another preset
                    preset_version=1 + len(attempts) % 3,
                )
            )
            attempts.append((new, msg))
        elif kind == "continue":  # Continue: a new attempt of the same answer, going on from ``att`` (any state)
            if msg.startswith(("k", "t")):  # side messages (compaction, title) are never continued
                continue
            new = f"a{len(attempts)}"
            add(Started(**base, attempt_id=new, message_id=msg, user_message_id="?", turn=turn, model="x",
                        trigger="continue", continues=att))  # fmt: skip
            attempts.append((new, msg))
        elif kind in ("chunk", "late_chunk"):
            n = chunk_seq.get(att, 0) if kind == "chunk" else max(chunk_seq.get(att, 0) - 1, 0)
            chunk_seq[att] = max(chunk_seq.get(att, 0), n + 1)
            add(Chunk(**base, attempt_id=att, request_id=f"r{att}", chunk_seq=n, text=f"<{att}:{n}:{seq}>"))
        elif kind == "stale":
            add(StaleChunk(**base, attempt_id=att, request_id=f"r{att}", chunk_seq=99, why="closed"))
        elif kind == "cancel":
            add(
                CancelRequested(
                    **base,
                    attempt_id=att,
                    source=step[2],
                    keep_partial=step[2] != "delete",
                    requested_by="host:2:b" if seq % 2 else None,  # another instance's Stop reduces the same
                )
            )
        elif kind == "cancelled":
            usage = Usage(input_tokens=seq, cached_tokens=seq // 2, partial=True) if seq % 2 else None
            add(Cancelled(**base, attempt_id=att, source="user", usage=usage))
        elif kind == "fail":
            add(
                Failed(
                    **base,
                    attempt_id=att,
                    request_id=f"r{att}",
                    error_type=ERROR_TYPES[seq % len(ERROR_TYPES)],
                    http_status=529 if seq % 2 else None,
                    summary="boom",
                    will_retry=step[2],
                    retry_after=0.5 if seq % 3 else None,
                    body='{"type":"error"}' if seq % 2 else None,
                    usage=Usage(input_tokens=seq, partial=True) if seq % 3 else None,
                )
            )
        elif kind == "done":
            add(Done(**base, attempt_id=att, request_id=f"r{att}"))
        elif kind == "persist":
            metrics = TurnMetrics(input_tokens=seq, input_estimated=seq % 2 == 0, output_estimated=seq % 3 == 0,
                                  completed_at=ts, wait_ms=float(seq) if seq % 2 else None)  # fmt: skip
            add(Persisted(**base, attempt_id=att, message_id=msg, status="complete", text="", metrics=metrics))
        elif kind == "recover":
            add(Recovered(**base, attempt_id=att))
        elif kind == "select":
            add(Selected(**base, message_id=f"m{step[1] + 1}", attempt_id=f"a{step[2]}"))
        elif kind == "select_version":
            add(VersionSelected(**base, message_id=users[step[1] % len(users)]))
        elif kind == "next_step":
            steps_of[att] = steps_of.get(att, 1) + 1
            add(StepStarted(**base, attempt_id=att, step=steps_of[att]))
        elif kind in ("call_started", "call_complete"):
            call_id, number = f"{att}-s{steps_of.get(att, 1)}-c{step[2]}", steps_of.get(att, 1)
            if kind == "call_started":
                add(ToolCallStarted(**base, attempt_id=att, step=number, call_id=call_id, name="t", index=step[2]))
            else:
                add(ToolCalled(**base, attempt_id=att, step=number, call_id=call_id, name="t", arguments="{}"))
        elif kind in SERVER_STEPS:  # a remote server recorded as used (before a call's dispatch) or as gone
            add(server_event(step, base, att, _call(att, steps_of, step[2])))
        elif kind == "dispatch":
            add(ToolDispatched(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), server="s"))
        elif kind == "tool_result":
            call_id = _call(att, steps_of, step[2])
            result = f"<r:{call_id}:{seq}>"
            whole = _whole(result) if step[2] % 2 else None
            add(ToolResult(**base, attempt_id=att, call_id=call_id, status=step[3], content=result, whole=whole))
        elif kind == "stale_result":
            add(StaleToolResult(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), why="closed"))
        elif kind == "upstream_closed":
            add(UpstreamClosed(**base, attempt_id=att, request_id=f"r{att}", close_ms=1.5))
        elif kind == "step_finished":
            number = steps_of.get(att, 1)
            usage = Usage(input_tokens=seq, output_tokens=2, reasoning_tokens=1, cached_tokens=1, cache_write_tokens=1)
            add(StepFinished(**base, attempt_id=att, step=number, finish_reason="tool_calls", usage=usage))
        elif kind == "awaiting_approval":
            add(ToolAwaitingApproval(**base, attempt_id=att, call_id=_call(att, steps_of, step[2])))
        elif kind == "approval_asked":
            call_id, why = _call(att, steps_of, step[2]), "destructive"
            add(ApprovalAsked(**base, attempt_id=att, call_id=call_id, server="s", tool="t", mode=step[3], why=why,
                              grant_hash=f"h{step[2]}"))  # fmt: skip
        elif kind == "approval_given":
            call_id, (decision, scope, by) = _call(att, steps_of, step[2]), step[3:]
            add(ApprovalGiven(**base, attempt_id=att, call_id=call_id, server="s", tool=f"t{step[2]}",
                              decision=decision, scope=scope, by=by, grant_hash=f"h{seq % 2}"))  # fmt: skip
        elif kind == "grant_revoked":
            add(GrantRevoked(**base, server="s", tool=f"t{step[1]}", scope="chat", grant_hash="h0"))
        elif kind == "progress":
            add(ToolProgress(**base, attempt_id=att, call_id=_call(att, steps_of, step[2]), progress=1, total=2))
        elif kind == "detach":
            add(Detached(**base, attempt_id=att))
        elif kind == "attach":
            add(Attached(**base, attempt_id=att))
        elif kind == "branch":
            add(Branched(**base, message_id=msg, new_conversation_id=f"c{seq}"))
        elif kind == "question":
            call_id = _call(att, steps_of, step[2])
            qid, mode = f"{call_id}-q{step[3]}", ("form", "url", "sign_in")[step[3] % 3]
            add(
                QuestionAsked(
                    **base,
                    attempt_id=att,
                    call_id=call_id,
                    question_id=qid,
                    mode=mode,
                    message="?",
                    requested="{}" if mode == "form" else "https://example.test/x",
                    revision="2026-07-28",
                )
            )
        elif kind == "answer":
            call_id = _call(att, steps_of, step[2])
            content = '{"n": 1}' if step[4] == "accept" else None
            add(
                QuestionAnswered(
                    **base,
                    attempt_id=att,
                    call_id=call_id,
                    question_id=f"{call_id}-q{step[3]}",
                    action=step[4],
                    content=content,
                    by=step[5],
                    reason="nobody to ask" if step[5] == "app" else None,
                )
            )
    return events


def _whole(preview: str) -> TextRef:
    """The reference a text over ``ledger.bounds.TEXT_BOUND`` leaves (its blob need not exist for the reducer)."""
    return TextRef(sha256=format(len(preview), "064x"), size=2_000_000 + len(preview), chars=2_000_000 + len(preview))


def _call(att: str, steps_of: dict[str, int], n: int) -> str:
    return f"{att}-s{steps_of.get(att, 1)}-c{n}"


def states_along(events: list[AnyEvent]) -> list[State]:
    states = [EMPTY_STATE]
    for event in events:
        states.append(reduce(states[-1], event))
    return states
