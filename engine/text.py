"""Text from outside (the user, the model) made safe to store and show.

Guarantees: ``valid_text`` always returns a string that encodes as UTF-8 (lone surrogates from JSON escapes become
U+FFFD) and is otherwise unchanged.
"""

from __future__ import annotations


def valid_text(text: str) -> str:
    """Model output may carry lone surrogates (from JSON escapes); keep it storable as UTF-8."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
