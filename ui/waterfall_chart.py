"""The waterfall's ECharts options and its words: made of a ``ledger.folds.waterfall.Waterfall``, nothing else.

Guarantees: pure (no element is made here); the options are plain values whose size is bounded by the
projection's limits (rows, bins, gaps), whatever the answer's length; every figure the chart shows on hover is
also in ``figures`` (the list beside it), in words.
"""

from __future__ import annotations

from typing import Any

from ledger.folds import Row, Waterfall

WAITING, STREAMING, CLOSING = "#9e9e9e", "#1976d2", "#90caf9"
AXIS: dict[str, Any] = {"name": "ms", "nameGap": 4, "axisLabel": {"fontSize": 10}, "nameTextStyle": {"fontSize": 10}}
TOOL, WAIT, FAILED, STOP, GAP, STALE = "#6a1b9a", "#ef6c00", "#c62828", "#d32f2f", "rgba(239,108,0,0.18)", "#ef6c00"


def duration(ms: float | None) -> str:
    if ms is None:
        return "—"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def row_words(row: Row) -> str:
    if row.kind == "request":
        parts = [f"sent {duration(row.start_ms)}"]
        if row.first_ms is not None:
            parts += [f"first chunk {duration(row.first_ms)}", f"last chunk {duration(row.last_ms)}"]
        else:
            parts.append("no chunk")
        parts.append(f"ended {duration(row.end_ms)}")
    else:
        parts = [
            f"from {duration(row.start_ms)}",
            f"to {duration(row.end_ms)}",
            f"{duration(row.end_ms - row.start_ms)}",
        ]
    outcome = "" if row.outcome == "ok" else f" ({row.outcome})"
    return f"{row.label}: {', '.join(parts)}{outcome}"


def stop_words(wf: Waterfall) -> str | None:
    if wf.cancel_ms is None:
        return None
    closed = f", upstream closed at {duration(wf.closed_ms)}" if wf.closed_ms is not None else ""
    return f"Stop ({wf.cancel_source or 'cancel'}) at {duration(wf.cancel_ms)}{closed}"


def figures(wf: Waterfall) -> list[str]:
    """The chart's figures as sentences, one a row (the accessible list beside the chart)."""
    lines = [row_words(row) for row in wf.rows]
    if wf.hidden_rows:
        lines.append(f"{wf.hidden_rows} more rows not drawn")
    chunks, stale = sum(wf.rendered_bins), sum(wf.stale_bins)
    lines.append(f"{chunks} chunks shown, {stale} stale, over {duration(wf.duration_ms)}")
    if wf.gaps:
        longest = max(end - start for start, end in wf.gaps)
        lines.append(f"{len(wf.gaps)} silences longer than a third of the idle timeout (longest {duration(longest)})")
    if (stop := stop_words(wf)) is not None:
        lines.append(stop)
    return lines


def stop_sentence(wf: Waterfall) -> str | None:
    if wf.tokens_at_stop is None:
        return None
    kept = "" if wf.tokens_kept is None else f"; the interrupted message holds {wf.tokens_kept}"
    return f"At this moment {wf.tokens_at_stop} tokens were on the screen{kept}."


def chart_options(wf: Waterfall) -> dict[str, Any]:
    rows = list(wf.rows)
    names = [f"{n + 1}. {row.label}" for n, row in enumerate(rows)]
    offset, waiting, streaming, closing = [], [], [], []
    for row in rows:
        words = row_words(row)
        offset.append(round(row.start_ms, 1))
        if row.kind == "request" and row.first_ms is not None:
            last = row.last_ms if row.last_ms is not None else row.first_ms
            waiting.append({"value": round(row.first_ms - row.start_ms, 1), "name": words})
            color = FAILED if row.outcome not in ("ok", "cancelled") else STREAMING
            streaming.append({"value": round(last - row.first_ms, 1), "name": words, "itemStyle": {"color": color}})
            closing.append({"value": round(row.end_ms - last, 1), "name": words})
        else:
            color = {"request": WAITING, "tool": TOOL, "wait": WAIT}[row.kind]
            if row.outcome not in ("ok", "cancelled"):
                color = FAILED
            waiting.append({"value": 0, "name": words})
            streaming.append(
                {"value": round(row.end_ms - row.start_ms, 1), "name": words, "itemStyle": {"color": color}}
            )
            closing.append({"value": 0, "name": words})
    marks: list[dict[str, Any]] = []
    if wf.cancel_ms is not None:
        marks.append({"xAxis": round(wf.cancel_ms, 1), "name": "Stop", "label": {"formatter": "Stop"}})
    if wf.closed_ms is not None:
        marks.append({"xAxis": round(wf.closed_ms, 1), "name": "upstream closed", "label": {"show": False}})
    centers = [round((n + 0.5) * wf.bin_ms, 1) for n in range(len(wf.rendered_bins))]
    areas: list[list[dict[str, Any]]] = [[{"xAxis": round(s, 1)}, {"xAxis": round(e, 1)}] for s, e in wf.gaps]
    if wf.cancel_ms is not None and wf.closed_ms is not None:
        areas.append(
            [
                {"xAxis": round(wf.cancel_ms, 1), "itemStyle": {"color": "rgba(211,47,47,0.25)"}},
                {"xAxis": round(wf.closed_ms, 1)},
            ]
        )
    bar = {"type": "bar", "stack": "w", "xAxisIndex": 0, "yAxisIndex": 0, "barMaxWidth": 18}
    top = max(60, 26 * len(rows) + 30)
    return {
        "animation": False,
        "tooltip": {"trigger": "item", "confine": True},
        "legend": {
            "top": 0,
            "data": ["waiting", "streaming", "closing", "chunks", "stale"],
            "textStyle": {"fontSize": 11},
        },
        "grid": [
            {"left": 4, "right": 16, "top": 52, "height": top, "containLabel": True},
            {"left": 4, "right": 16, "top": top + 96, "height": 70, "containLabel": True},
        ],
        "xAxis": [
            {"type": "value", "gridIndex": 0, "min": 0, "max": round(wf.duration_ms, 1), "splitNumber": 3, **AXIS},
            {"type": "value", "gridIndex": 1, "min": 0, "max": round(wf.duration_ms, 1), "splitNumber": 3, **AXIS},
        ],
        "yAxis": [
            {
                "type": "category",
                "gridIndex": 0,
                "data": names,
                "inverse": True,
                "axisLabel": {"width": 90, "overflow": "truncate", "fontSize": 10},
            },
            {"type": "value", "gridIndex": 1, "minInterval": 1, "splitNumber": 2, "axisLabel": {"fontSize": 10}},
        ],
        "series": [
            {
                **bar,
                "name": "offset",
                "data": offset,
                "itemStyle": {"color": "transparent"},
                "silent": True,
                "tooltip": {"show": False},
            },
            {**bar, "name": "waiting", "data": waiting, "itemStyle": {"color": WAITING}},
            {
                **bar,
                "name": "streaming",
                "data": streaming,
                "itemStyle": {"color": STREAMING},
                "markLine": {"symbol": "none", "lineStyle": {"color": STOP}, "data": marks},
            },
            {**bar, "name": "closing", "data": closing, "itemStyle": {"color": CLOSING}},
            {
                "type": "line",
                "name": "chunks",
                "xAxisIndex": 1,
                "yAxisIndex": 1,
                "step": "middle",
                "symbol": "none",
                "areaStyle": {},
                "itemStyle": {"color": STREAMING},
                "data": [[c, v] for c, v in zip(centers, wf.rendered_bins, strict=True)],
                "markArea": {"silent": True, "itemStyle": {"color": GAP}, "data": areas},
                "markLine": {"symbol": "none", "lineStyle": {"color": STOP}, "data": marks},
            },
            {
                "type": "line",
                "name": "stale",
                "xAxisIndex": 1,
                "yAxisIndex": 1,
                "step": "middle",
                "symbol": "none",
                "itemStyle": {"color": STALE},
                "data": [[c, v] for c, v in zip(centers, wf.stale_bins, strict=True)],
            },
        ],
    }


def chart_height(wf: Waterfall) -> int:
    return max(60, 26 * len(wf.rows) + 30) + 196
