"""The codec: every kind round-trips; bad input is rejected with a message naming what is wrong."""

from __future__ import annotations

import dataclasses
import json
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.codec import KIND_TO_CLASS, dumps_line, from_dict, from_jsonl, to_dict
from ledger.errors import CodecError, LedgerError
from ledger.events import AttemptUsage
from ledger.events.core import (
    EVENT_CLASSES,
    Attachment,
    Created,
    Event,
    Failed,
    Param,
    Submitted,
    TextRef,
    ToolPart,
    TurnMetrics,
    Usage,
)

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), text)


def strategy_for(hint: typing.Any) -> st.SearchStrategy[typing.Any]:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return st.one_of(*(strategy_for(a) for a in typing.get_args(hint)))
    if origin is typing.Literal:
        return st.sampled_from(typing.get_args(hint))
    if origin is tuple:
        item = typing.get_args(hint)[0]
        if item is Param:
            return st.dictionaries(text, scalars, max_size=3).map(
                lambda d: tuple(Param(name=k, value=v) for k, v in d.items())
            )
        return st.lists(strategy_for(item), max_size=3).map(tuple)
    if hint in (Usage, TurnMetrics, Attachment, ToolPart, TextRef, AttemptUsage):
        hints = typing.get_type_hints(hint)
        return st.builds(hint, **{f.name: strategy_for(hints[f.name]) for f in dataclasses.fields(hint)})
    return {
        str: text,
        int: st.integers(0, 10**9),
        float: st.floats(allow_nan=False, allow_infinity=False),
        bool: st.booleans(),
        type(None): st.none(),
    }[hint]


def event_strategy(cls: type[Event]) -> st.SearchStrategy[Event]:
    hints = typing.get_type_hints(cls)
    return st.builds(cls, **{f.name: strategy_for(hints[f.name]) for f in dataclasses.fields(cls)})


any_event = st.one_of(*(event_strategy(cls) for cls in EVENT_CLASSES))


@settings(max_examples=500, deadline=None)
@given(any_event)
def test_codec_round_trips_every_kind_through_json_lines(event: Event) -> None:
    line = dumps_line(event)
    assert "\n" not in line
    assert from_dict(json.loads(line)) == event
    assert to_dict(event)["kind"] == event.KIND


def test_every_kind_has_exactly_one_class() -> None:
    assert len(KIND_TO_CLASS) == len(EVENT_CLASSES) == len({cls.KIND for cls in EVENT_CLASSES})  # none shared
    assert set(KIND_TO_CLASS) >= {
        "submitted",
        "started",
        "request_sent",
        "chunk",
        "stale_chunk",
        "cancel_requested",
        "upstream_closed",
        "cancelled",
        "failed",
        "retrying",
        "done",
        "persisted",
        "deleted",
        "recovered",
        "detached",
        "attached",
        "step_started",
        "step_finished",
        "tool_call_started",
        "tool_call",
        "tool_awaiting_approval",
        "approval_asked",
        "approval_given",
        "grant_revoked",
        "tool_dispatched",
        "tool_progress",
        "tool_result",
        "stale_tool_result",
        "version_selected",
        "branched",
        "message_queued",
        "queued_edited",
        "queued_removed",
    }


def test_export_uses_design_field_names() -> None:
    line = {
        "seq": 3,
        "ts": "2026-11-30T08:00:00.000Z",
        "kind": "chunk",
        "conversation_id": "c",
        "attempt_id": "a",
        "request_id": "r",
        "chunk_seq": 0,
        "text": "hi",
        "block": "text",
    }
    assert to_dict(from_dict(line)) == line


def test_unknown_kind_is_rejected_naming_it() -> None:
    with pytest.raises(CodecError, match="unknown event kind 'teleported'"):
        from_dict({"kind": "teleported", "conversation_id": "c"})


def test_missing_field_is_rejected_naming_kind_and_field() -> None:
    with pytest.raises(CodecError, match="chunk: missing field 'attempt_id'"):
        from_dict({"kind": "chunk", "conversation_id": "c", "request_id": "r", "chunk_seq": 1, "text": "x"})


def test_wrong_literal_value_is_rejected() -> None:
    with pytest.raises(CodecError, match="cancel_requested.source"):
        from_dict({"kind": "cancel_requested", "conversation_id": "c", "attempt_id": "a", "source": "gremlins"})


def test_a_bad_json_lines_file_names_the_line_and_is_a_ledger_error() -> None:
    good = dumps_line(KIND_TO_CLASS["deleted"](conversation_id="c"))
    with pytest.raises(LedgerError, match="line 2"):
        from_jsonl([good, '{"kind": "chunk"}'])


def test_a_failed_event_of_an_older_ledger_without_retry_after_or_body_still_decodes() -> None:
    old = {
        "seq": 3,
        "ts": "2026-01-01T00:00:00Z",
        "kind": "failed",
        "conversation_id": "c1",
        "attempt_id": "a1",
        "request_id": "r1",
        "error_type": "server",
        "http_status": 500,
        "summary": "The provider had a server error.",
        "retryable": True,
        "will_retry": False,
    }
    event = from_dict(old)
    assert isinstance(event, Failed) and (event.retry_after, event.body) == (None, None)
    assert {k: v for k, v in to_dict(event).items() if k not in ("retry_after", "body", "usage")} == old


def test_usage_and_metrics_of_an_older_ledger_decode_and_read_as_estimated_as_they_said() -> None:
    old_metrics = {"input_tokens": 19, "output_tokens": 4, "cached_tokens": 0, "estimated": True, "steps": 1}
    persisted = from_dict(
        {
            "seq": 9,
            "ts": "2026-01-01T00:00:00Z",
            "kind": "persisted",
            "conversation_id": "c1",
            "attempt_id": "a1",
            "message_id": "m1",
            "status": "interrupted",
            "text": "w0 w1",
            "metrics": old_metrics,
        }
    )
    metrics = persisted.metrics
    assert metrics.input_estimated is None and metrics.input_is_estimated and metrics.output_is_estimated
    assert (metrics.reasoning_tokens, metrics.cache_write_tokens) == (0, 0)
    cancelled = {"seq": 8, "ts": "", "kind": "cancelled", "conversation_id": "c1", "attempt_id": "a1", "source": "user"}
    assert from_dict(cancelled).usage is None
    done = {"seq": 7, "ts": "", "kind": "done", "conversation_id": "c1", "attempt_id": "a1", "request_id": "r1"}
    done["usage"] = {"input_tokens": 5, "output_tokens": 2, "cached_tokens": 0, "estimated": False}
    assert from_dict(done).usage == Usage(input_tokens=5, output_tokens=2)


def test_a_personal_mode_event_is_written_as_before_team_mode_and_a_team_mode_one_names_its_actor() -> None:
    plain = Submitted(conversation_id="c", message_id="u1", turn=1, text="hi")
    assert "actor" not in to_dict(plain) and {"owner", "cwd"}.isdisjoint(to_dict(Created(conversation_id="c")))
    opened = Created(conversation_id="c", cwd="/home/me/project")  # an editor's session (``main.py acp``)
    assert from_dict(to_dict(opened)) == opened
    signed = Submitted(conversation_id="c", message_id="u1", turn=1, text="hi", actor="local:ann")
    assert to_dict(signed)["actor"] == "local:ann" and from_dict(to_dict(signed)) == signed
    assert from_dict(to_dict(plain)) == plain
