"""A share link's page as plain HTML (``/s/<token>``): the snapshot (``ledger.share_view``), read-only, with no
script at all and nothing loaded from anywhere (its styles are inline).

Guarantees:
- ``share_html(view, ...)`` is a whole document: ``<meta name="robots" content="noindex, nofollow">`` and
  ``<meta name="referrer" content="no-referrer">``, "Snapshot of <date>", each user message as text, each answer
  with every attempt: one attempt is shown as it is; several are ``<details>`` ("Attempt 2 of 3", the one shown then
  open), so any can be read without a script. Each attempt says how it ended as the chat page does ("Stopped: …",
  "Stopped before any text", the error, "Still being written when this was shared"); its element carries
  ``data-status`` (the page's words: complete | interrupted | failed | empty | streaming).
- Model text goes through the app's sanitising markdown renderer (``ui.markdown.safe.render``: raw HTML shown as
  text, remote images as links); every other text (user messages, tool names, arguments, results, file names, the
  title) is HTML-escaped. Tool calls show name and status; arguments and results only when the view holds them
  (the sharer ticked "include tool details"): nothing of them is in the document otherwise.
- No form, no script, no websocket: the only links are to this app (a file of the snapshot, "Continue in a copy",
  "Shared links") and whatever links the model wrote.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from ledger.share_view import SharedAttempt, SharedCall, SharedMessage, SharedView
from ui.answer_status import DOM_STATUS
from ui.format import CAUSES, date_time, model_label, tool_state_words
from ui.markdown import code_css, render

RESULT_CHARS = 4_000
STILL_WRITING = "Still being written when this was shared"
STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem;color:#1b1b1f;background:#fff}
header{border-bottom:1px solid #ddd;margin-bottom:1rem}h1{font-size:1.3rem;margin:.2rem 0}
.meta{color:#555;font-size:.85rem}.msg{margin:1rem 0;padding:.6rem .8rem;border-radius:.5rem}
.user{background:#eef2ff;white-space:pre-wrap;word-break:break-word}.assistant{border:1px solid #e3e3e8}
.chip{display:inline-block;font-size:.8rem;padding:0 .4rem;border-radius:.3rem;background:#fde7e7;color:#8a1c1c}
.tool{border-left:3px solid #99a;padding:.2rem .6rem;margin:.4rem 0;font-size:.9rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f8;padding:.4rem;border-radius:.3rem}
details{margin:.3rem 0}summary{cursor:pointer;color:#334}footer{margin-top:2rem;border-top:1px solid #ddd}
@media (prefers-color-scheme:dark){body{background:#17171a;color:#e6e6ea}.user{background:#24263a}
.assistant{border-color:#333}pre{background:#222226}.meta{color:#aaa}}
"""


def share_html(view: SharedView, token: str, *, member: bool, owner: bool) -> str:
    """The whole page (see the module's guarantees)."""
    title = escape(view.title or "A shared chat")
    body = "\n".join(_message(m, token) for m in view.messages) or '<p class="meta">Nothing was written yet.</p>'
    actions = []
    if member:
        actions.append(f'<a href="/s/{quote(token)}/copy" data-action="copy">Continue in a copy</a>')
    if owner:
        actions.append('<a href="/shares" data-action="manage">Update or revoke this link (Shared links)</a>')
    footer = " · ".join(actions)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">'
        f"<title>{title} · shared from Ledger Chat</title><style>{STYLE}{code_css()}</style></head>\n<body>"
        f'<header><h1>{title}</h1><p class="meta" data-snapshot="{escape(view.at_ts)}">Snapshot of '
        f"{escape(date_time(view.at_ts))}: a read-only copy of this chat as it was then. Later messages never "
        "appear here.</p></header>\n<main>"
        f"{body}</main>\n<footer><p>{footer}</p></footer></body></html>\n"
    )


def _message(m: SharedMessage, token: str) -> str:
    if m.role == "user":
        files = "".join(
            f'<li><a href="/s/{quote(token)}/files/{f.sha256}">{escape(f.name)}</a> '
            f'<span class="meta">({escape(f.media_type)}, {f.size:,} bytes)</span></li>'
            for f in m.files
        )
        left = m.files_left_out
        note = f'<p class="meta">{left} attached file{"" if left == 1 else "s"} not shared.</p>' if left else ""
        listed = f"<ul>{files}</ul>" if files else ""
        return f'<section class="msg user" data-role="user">{escape(m.text)}{listed}{note}</section>'
    count = len(m.attempts)
    if count == 1:
        inner = _attempt(m.attempts[0])
    else:
        inner = "".join(
            f'<details class="attempt" data-attempt="{i + 1}/{count}"{" open" if i == m.shown else ""}>'
            f"<summary>Attempt {i + 1} of {count} · {escape(_ending(a) or 'complete')}</summary>{_attempt(a)}</details>"
            for i, a in enumerate(m.attempts)
        )
    shown = m.attempts[m.shown]
    status = DOM_STATUS.get(shown.status, shown.status)
    return (
        f'<section class="msg assistant" data-role="assistant" data-status="{escape(status)}" '
        f'data-attempt="{m.shown + 1}/{count}">{inner}</section>'
    )


def _attempt(a: SharedAttempt) -> str:
    parts = []
    for text, calls in a.steps:
        if text:
            parts.append(f'<div class="md">{render(text)}</div>')
        parts += [_call(c) for c in calls]
    ending = _ending(a)
    marker = f'<p><span class="chip" data-marker="{escape(a.status)}">{escape(ending)}</span></p>' if ending else ""
    status = DOM_STATUS.get(a.status, a.status)
    model = f'<p class="meta">{escape(model_label(a.model))}</p>'
    return f'<div class="answer" data-status="{escape(status)}">{"".join(parts)}{marker}{model}</div>'


def _ending(a: SharedAttempt) -> str:
    """How the attempt ended, in the chat page's words ("" for a complete one)."""
    cause = CAUSES.get(a.cancel_source or "")
    if a.status == "empty":
        return "Stopped before any text" + (f" ({cause})" if cause else "")
    if a.status == "interrupted":
        return f"Stopped: {cause}" if cause else "Stopped"
    if a.status == "failed":
        return f"Failed: {a.error_summary or 'the answer failed.'}"
    if a.status in ("streaming", "closing"):
        return STILL_WRITING
    return ""


def _call(c: SharedCall) -> str:
    status = tool_state_words(c.status) if c.status else "no result at the snapshot"
    head = f'<div class="tool" data-tool="{escape(c.name)}"><strong>{escape(c.name)}</strong> · {escape(status)}'
    details = ""
    if c.arguments is not None:
        details += f'<pre class="tool-arguments">{escape(c.arguments)}</pre>'
    if c.result is not None:
        result = c.result if len(c.result) <= RESULT_CHARS else c.result[:RESULT_CHARS] + " […]"
        details += f'<pre class="tool-result">{escape(result)}</pre>'
    return f"{head}{details}</div>"
