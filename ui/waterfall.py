"""``WaterfallView``: one attempt's waterfall (ECharts, served by the app) with its figures listed beside it, and the
replay of what the user saw (1×, 10×, or a time cursor dragged by hand), marking the moment Stop was pressed,
rendered as the answer was (``ui.markdown``: the same safe renderer, the tail closed where half-written).

Guarantees: everything shown is ``ledger.folds.waterfall`` over the ledger (rebuilt from an export alike); the chart
gets bounded, downsampled values (``ui.waterfall_chart``), the replay shows at most ``SCREEN_CHARS`` characters (the
tail of what was on the screen at the cursor) and one counter; playing ticks ten times a second on the server only
while it plays, and stops at the end or when the view goes away.
"""

from __future__ import annotations

from nicegui import ui

from ledger.folds import Waterfall, frame_at
from ui.markdown import MarkdownStream
from ui.waterfall_chart import chart_height, chart_options, duration, figures, stop_sentence

SCREEN_CHARS = 2000
TICK = 0.1


def screen_start(text: str, chars: int) -> int:
    """Where the replay's screen starts for the first ``chars`` characters of ``text``: 0 when they fit in
    ``SCREEN_CHARS``, else the first paragraph break within the last ``SCREEN_CHARS`` that lies outside a code fence
    (so the markdown shown starts on a whole block: a fence's blank line is not one), or the bare cut when the
    window holds no such break before its last characters."""
    start = max(0, chars - SCREEN_CHARS)
    if start == 0:
        return 0
    fences = text.count("\n```", 0, start) + text.startswith("```")
    at = start
    while (brk := text.find("\n\n", at, chars - 2)) >= 0:
        fences += text.count("\n```", at, brk)
        if fences % 2 == 0:
            return brk + 2
        at = brk + 2
    return start


class WaterfallView:
    def __init__(self, wf: Waterfall) -> None:
        self.wf = wf
        self.speed = 0.0
        self.timer: ui.timer | None = None
        with ui.column().classes("w-full gap-2").mark("waterfall").props('data-testid="waterfall"') as self.root:
            ui.echart(chart_options(wf)).classes("w-full").style(f"height: {chart_height(wf)}px").mark(
                "waterfall-chart"
            )
            with ui.column().classes("w-full gap-0").mark("waterfall-figures").props('data-testid="waterfall-figures"'):
                for line in figures(wf):
                    label = ui.label(line).classes("lc-meta break-words")
                    if line.startswith("Stop ("):
                        label.mark("waterfall-stop").props('data-testid="waterfall-stop"')
            ui.label("Replay what the user saw").classes("font-medium text-sm")
            with ui.row().classes("items-center gap-2"):
                ui.button("1×", icon="play_arrow", on_click=lambda: self.play(1)).props(
                    'flat dense no-caps aria-label="Replay at 1×"'
                )
                ui.button("10×", icon="fast_forward", on_click=lambda: self.play(10)).props(
                    'flat dense no-caps aria-label="Replay at 10×"'
                )
                ui.button("Pause", icon="pause", on_click=self.pause).props(
                    'flat dense no-caps aria-label="Pause the replay"'
                )
                if wf.cancel_ms is not None:
                    ui.button("Stop moment", icon="stop_circle", on_click=lambda: self.seek(wf.cancel_ms or 0)).props(
                        'flat dense no-caps aria-label="Go to the moment Stop was pressed"'
                    ).mark("replay-to-stop").props('data-testid="replay-to-stop"')
            self.slider = (
                ui.slider(min=0, max=round(wf.duration_ms, 1), step=max(1.0, round(wf.duration_ms / 1000, 1)), value=0)
                .props('label aria-label="Replay time cursor, in milliseconds"')
                .on("update:model-value", lambda e: self.show(float(e.args or 0)), throttle=0.1, trailing_events=False)
                .on("change", lambda e: self.show(float(e.args or 0)))  # where the drag ended, exactly, and at once
                .mark("replay-cursor")
                .props('data-testid="replay-cursor"')
            )
            self.counter = ui.label().classes("lc-meta").mark("replay-counter").props('data-testid="replay-counter"')
            self.cut = ui.label("…").classes("lc-meta").mark("replay-cut")
            self.screen = MarkdownStream().classes("w-full break-words").mark("replay-text")
            self.screen.props('data-testid="replay-text"')
            if (sentence := stop_sentence(wf)) is not None:
                ui.label(sentence).classes("lc-meta").mark("replay-stop").props('data-testid="replay-stop"')
        self.show(0.0)

    def show(self, at_ms: float) -> None:
        frame = frame_at(self.wf, at_ms)
        marker = ""
        if self.wf.cancel_ms is not None and at_ms >= self.wf.cancel_ms:
            marker = " · at Stop" if at_ms == self.wf.cancel_ms else " · after Stop"
        self.counter.set_text(f"{frame.tokens} tokens on the screen at {duration(at_ms)}{marker}")
        start = screen_start(self.wf.text, frame.chars)
        self.cut.set_visibility(start > 0)
        self.screen.show(self.wf.text[start : frame.chars], final=False)

    def seek(self, at_ms: float) -> None:
        self.pause()
        self.slider.value = at_ms  # on_change is not wired: show it here
        self.show(at_ms)

    def play(self, speed: float) -> None:
        self.speed = speed
        if float(self.slider.value or 0) >= self.wf.duration_ms:
            self.slider.value = 0
        if self.timer is None:
            with self.root:
                self.timer = ui.timer(TICK, self._tick)

    def pause(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _tick(self) -> None:
        if self.root.is_deleted:
            self.pause()
            return
        at = min(self.wf.duration_ms, float(self.slider.value or 0) + TICK * 1000 * self.speed)
        self.slider.value = at
        self.show(at)
        if at >= self.wf.duration_ms:
            self.pause()
