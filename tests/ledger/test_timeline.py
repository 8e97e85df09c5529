"""The audit, the trace and the waterfall are projections of one timeline per attempt (``ledger.folds.timeline``): on
the
same random sessions they agree on every per-attempt fact they share."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.core import AnyEvent, Persisted
from ledger.folds.audit import AttemptAudit, audit
from ledger.folds.trace import traces
from ledger.folds.waterfall import waterfalls
from tests.ledger.test_reducer import build_events, steps

ENDS = ("done", "failed", "cancelled", "recovered")


def audit_at_persisted(events: list[AnyEvent], attempt_id: str) -> AttemptAudit:
    """The attempt's audit as its trace sees it: of the events up to its first ``persisted`` (the trace is made
    then; what follows is late or stale)."""
    end = next(i for i, e in enumerate(events) if isinstance(e, Persisted) and e.attempt_id == attempt_id)
    return next(a for a in audit(events[: end + 1]) if a.attempt_id == attempt_id)


def end_of(a: AttemptAudit) -> str:
    return next((p.kind for p in a.phases if not p.late and p.kind in ENDS), "persisted")


@settings(max_examples=300, deadline=None)
@given(st.lists(steps, max_size=80))
def test_the_audit_the_trace_and_the_waterfall_of_a_random_session_agree_on_each_attempt(plan: list[tuple]) -> None:
    events = build_events(plan)
    audits = {a.attempt_id: a for a in audit(events)}
    shown = {w.attempt_id: w for w in waterfalls(events, idle_timeout=30)}
    for value in traces(events):
        root, spans = value.spans[0], value.spans[1:]
        whole, seen = audits[value.attempt_id], audit_at_persisted(events, value.attempt_id)
        requests = sum(1 for span in spans if span.kind == "client")

        # the trace is made when the attempt's persisted lands: it agrees with the audit of the events until then
        assert root.attribute("ledger.requests") == requests == len(seen.requests) == len(whole.requests)
        assert root.attribute("ledger.chunks") == seen.chunk_count == whole.chunk_count
        assert root.attribute("ledger.stale_chunks") == seen.stale_chunks
        assert root.attribute("ledger.status") == seen.status == whole.status
        per_request: list[int] = [int(str(s.attribute("ledger.chunks"))) for s in spans if s.kind == "client"]
        assert sum(per_request) <= seen.chunk_count  # a chunk of a request never sent counts for the attempt only
        end = end_of(seen)
        assert end == end_of(whole)
        if end in ("cancelled", "recovered"):
            assert root.status == "error" and root.attribute("error.type") == "cancelled"
            assert root.attribute("ledger.cancel_source") == seen.cancel_source
        elif end == "failed":
            assert root.status == "error" and root.attribute("error.type") == seen.error_type
        else:
            assert root.status == "unset" and root.attribute("error.type") is None

        # the waterfall reads the whole session: its chunks are the audit's, rendered and stale
        wf = shown[value.attempt_id]
        assert sum(1 for row in wf.rows if row.kind == "request") == len(whole.requests)
        assert sum(wf.rendered_bins) == wf.frames[-1].tokens == whole.chunk_count
        assert sum(wf.stale_bins) == whole.stale_chunks
        assert wf.status == whole.status
    assert set(shown) == {value.attempt_id for value in traces(events)}
