"""The waterfall's chart options stay small whatever the answer's length, and say in words what they draw."""

from __future__ import annotations

import json
from dataclasses import replace

from ledger.folds.waterfall import waterfalls
from tests.support.ledger_builders import T0, TEST_PACE, turn_events
from ui.waterfall_chart import chart_options, figures


def test_a_20000_chunk_answer_sends_the_browser_a_few_kilobytes_and_lists_every_figure_in_words() -> None:
    texts = [f"t{n} " for n in range(20_000)]
    events = [
        replace(e, seq=n) for n, e in enumerate(turn_events("c", 1, texts, at=T0, question="q", pace=TEST_PACE), 1)
    ]
    (wf,) = waterfalls(events, idle_timeout=30)
    assert len(json.dumps(chart_options(wf))) < 16_000
    words = figures(wf)
    assert words[0].startswith("chat demo: sent") and "20000 chunks shown, 0 stale" in words[-1]
