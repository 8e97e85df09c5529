"""What a stream message is made of (``ui.markdown.stream``): a finished block as markup and ranges of its text,
and the message written as JavaScript.

Guarantees: ``block_parts`` never raises (a block that cannot be rendered shows as written, with a note);
``js_literal`` writes lists, strings, ints and None so that the JSON carrying the code escapes each character once.
"""

from __future__ import annotations

from typing import Any

from ui.markdown.safe import FAILED, Part, as_text, html_parts, last_block, render


def js_literal(value: Any) -> str:
    """``value`` (lists, strings, ints, None) as JavaScript: strings as template literals (only ``\\``, a backtick,
    ``${`` and CR escaped), so the JSON that carries the code escapes a newline or a quote once, not twice (JSON
    in a JSON string): a code block's newlines cost 2 bytes, not 3."""
    if isinstance(value, str):
        return "`" + value.replace("\\", "\\\\").replace("`", "\\`").replace("${", "\\${").replace("\r", "\\r") + "`"
    if isinstance(value, list):
        return "[" + ",".join([js_literal(v) for v in value]) + "]"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is None:
        return "null"
    raise TypeError(f"not a stream message value: {type(value).__name__}")


def block_parts(source: str, last: bool, cut: bool = False) -> list[Part]:
    """A finished block (``last``: the final tail, see ``render_blocks``) as markup and ranges; never raises (a
    failure past the renderer's own guard shows the block as written: the stream, and the page, go on)."""
    try:
        return html_parts(source, last_block(source, cut) if last else render(source))
    except Exception:
        return html_parts(source, as_text(source, FAILED))
