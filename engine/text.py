"""Text from outside (the user, the model) made safe to store and show.

Guarantees: ``valid_text`` always returns a string that encodes as UTF-8 (lone surrogates from JSON escapes become
U+FFFD) and is otherwise unchanged. ``visible_title`` drops control, format (zero-width, bidi override) and
surrogate characters and collapses white space, so a title it returns empty shows nothing and needs a name.
"""

from __future__ import annotations

import unicodedata

_INVISIBLE = {"Cc", "Cf", "Cs"}
_ZWJ = "\u200d"  # joins emoji sequences: kept between visible characters


def valid_text(text: str) -> str:
    """Model output may carry lone surrogates (from JSON escapes); keep it storable as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")


def visible_title(title: str) -> str:
    """The title without invisible characters and with single spaces; '' when nothing visible is left."""
    kept = "".join(
        " " if ch.isspace() else ch
        for ch in title
        if ch.isspace() or ch == _ZWJ or unicodedata.category(ch) not in _INVISIBLE
    )
    words = " ".join(kept.split())
    return words if words.replace(_ZWJ, "").strip() else ""
