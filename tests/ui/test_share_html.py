"""A share link's HTML (``ui.share_html``): tool arguments and results, and files, are in the document only when
the sharer ticked them, whatever the session; the page holds no script and nothing the model wrote runs."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.events.core import AnyEvent, Attachment, Submitted, ToolCalled, ToolResult
from ledger.share_view import view_of
from tests.support.random_sessions import build_events
from tests.support.session_steps import lived_sessions
from ui.share_html import share_html

ARGUMENTS, RESULT = "ARGS-4f1c-secret", "RESULT-9a2e-secret"
FILE = Attachment(sha256="e" * 64, name="payroll-77.xlsx", media_type="application/octet-stream", size=9)


def _marked(events: list[AnyEvent]) -> list[AnyEvent]:
    out: list[AnyEvent] = []
    for e in events:
        if isinstance(e, ToolCalled):
            e = replace(e, arguments=f'{{"q": "{ARGUMENTS}"}}')
        elif isinstance(e, ToolResult):
            e = replace(e, content=RESULT)
        elif isinstance(e, Submitted):
            e = replace(e, attachments=(FILE,), text=e.text + " <script>alert(1)</script>")
        out.append(e)
    return out


@settings(max_examples=150, deadline=None)
@given(lived_sessions, st.booleans(), st.booleans())
def test_tool_details_and_files_are_in_the_html_only_when_ticked(plan: list[tuple], tools: bool, files: bool) -> None:
    events = _marked(build_events(plan))
    view = view_of(events, events[-1].seq, tools=tools, attachments=files)
    assert view is not None
    html = share_html(view, "tok", member=False, owner=False)
    assert ARGUMENTS not in html or tools, "tool arguments only when ticked"
    assert RESULT not in html or tools, "tool results only when ticked"
    assert FILE.name not in html or files, "files only when ticked"
    assert "<script" not in html, "a message's text is escaped, and the page has no script of its own"
    shown = share_html(view_of(events, events[-1].seq, tools=True, attachments=True), "tok", member=False, owner=False)
    assert FILE.name in shown, "ticked, the files are listed"
