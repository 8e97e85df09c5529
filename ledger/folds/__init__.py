"""Read-only projections of one conversation's events beside the reducer: the per-attempt timeline fold
(``timeline*``) and what is made from it: the audit (``audit*``), the trace (``trace*``, OpenTelemetry's GenAI
shape) and the request waterfall (``waterfall``).

Guarantees: pure; one fold of each attempt's events under all three (the stale rule from ``ledger.stale``, the one
end from ``ledger.ends``): a late event shows as late and never wins; the three agree on every attempt's requests,
chunks, stale pieces and end (``tests/ledger/test_timeline.py``).
"""

from __future__ import annotations

from ledger.folds.audit import AttemptAudit, Phase, PhaseKind, audit
from ledger.folds.trace import Traces, traces
from ledger.folds.trace_values import AttemptTraceValue, AttrValue, SpanValue
from ledger.folds.waterfall import Row, Waterfall, frame_at, waterfalls

__all__ = [
    "AttemptAudit",
    "AttemptTraceValue",
    "AttrValue",
    "Phase",
    "PhaseKind",
    "Row",
    "SpanValue",
    "Traces",
    "Waterfall",
    "audit",
    "frame_at",
    "traces",
    "waterfalls",
]
