"""The browser's side of the markdown stream, in Python: what ``ui/static/markdown_stream.js`` makes of the parts
the server sends for a block (``ui.markdown.safe.html_parts``), so a test can compare it with the rendered HTML.

``rebuilt(source, parts)`` joins the parts: markup as it is, each ``[start, end]`` range the escaped slice of the
block's own text, counted in UTF-16 units as JavaScript counts them.
"""

from __future__ import annotations

from html import escape


def rebuilt(source: str, parts: list[str | list[int]]) -> str:
    """What the browser does with the parts (markdown_stream.js): markup as is, ranges escaped."""
    units = source.encode("utf-16-le")  # ranges count UTF-16 units, as JavaScript does
    return "".join(
        p if isinstance(p, str) else escape(units[2 * p[0] : 2 * p[1]].decode("utf-16-le"), quote=False) for p in parts
    )
