"""The page's look and its browser-side behaviour, served as the app's own static files.

Guarantees: ``utilities.css``, ``ledger.css``, ``ledger.js``, ``attachments.js`` and ``composer.js`` (in
``ui/static``) are served from the app itself under ``/lc-static`` with a version in the URL (nothing is loaded
from another host);
``add_style`` adds them to a page with the Pygments styles for code, the skip link to the message box, the "Jump to
latest" button, the screen-reader announcement region and the drop zone shown while files are dragged over the
page. What each script does is listed at its top. ``utilities.css`` is the CSS
Tailwind makes for the classes ``ui/`` uses (NiceGUI runs without its in-browser Tailwind compiler:
``tailwind=False`` in ``main.py``); ``python3.11 tasks.py utilities-css`` re-makes it
(``tests/support/utilities_css.py``), ``tests/browser/test_utilities_css.py`` fails while it misses a class.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from nicegui import app, ui

from ui.markdown import code_css

STATIC = Path(__file__).with_name("static")
ROUTE = "/lc-static"
BODY = """
<a class="lc-skip" href="#lc-message-box">Skip to the message box</a>
<button id="lc-jump" type="button" hidden aria-label="Jump to latest">
  <span class="material-icons" aria-hidden="true" style="font-size:18px">arrow_downward</span> Latest
</button>
<div id="lc-drop" hidden aria-hidden="true"><span>Drop files to attach them to your message</span></div>
"""


def serve_static() -> None:
    """Register the route once per process (before pages are served)."""
    if not any(getattr(r, "path", None) == ROUTE for r in app.routes):
        app.add_static_files(ROUTE, STATIC)


@cache
def static_version() -> int:
    """The static files' version in their addresses (a browser fetches them again after an upgrade), read once."""
    return int(max(p.stat().st_mtime for p in STATIC.iterdir()))


def add_style() -> None:
    version = static_version()
    ui.add_head_html(f'<link rel="stylesheet" href="{ROUTE}/utilities.css?v={version}">')
    ui.add_head_html(f'<link rel="stylesheet" href="{ROUTE}/ledger.css?v={version}">')
    ui.add_head_html(f'<script src="{ROUTE}/ledger.js?v={version}" defer></script>')
    ui.add_head_html(f'<script src="{ROUTE}/attachments.js?v={version}" defer></script>')
    ui.add_head_html(f'<script src="{ROUTE}/composer.js?v={version}" defer></script>')
    ui.add_head_html(f'<script src="{ROUTE}/context_menus.js?v={version}" defer></script>')
    ui.add_css(code_css())
    ui.add_body_html(BODY)
