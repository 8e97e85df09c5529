"""The bound on a text in an event: the preview is always a prefix of the text within 64 KB of UTF-8, whatever the
characters at the cut (1 to 4 bytes, lone surrogates), and only a text over 1 MB is over the bound."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.bounds import PREVIEW_BYTES, TEXT_BOUND, encoded, is_over, preview

pieces = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(pieces, st.integers(0, 3), st.integers(PREVIEW_BYTES // 8 - 3, PREVIEW_BYTES // 8 + 3))
def test_a_preview_is_a_prefix_of_the_text_within_64_kb_whatever_the_characters_at_the_cut(
    piece: str, shift: int, repeat: int
) -> None:
    text = "a" * shift + piece * repeat * 8
    shown = preview(text)
    assert text.startswith(shown) and len(encoded(shown)) <= PREVIEW_BYTES
    assert len(encoded(shown)) > PREVIEW_BYTES - 4 or shown == text  # cut only by the last character's bytes


def test_only_a_text_over_1_mb_of_utf8_is_over_the_bound() -> None:
    assert not is_over("x" * TEXT_BOUND) and is_over("x" * (TEXT_BOUND + 1))
    assert is_over("é" * (TEXT_BOUND // 2 + 1)) and not is_over("é" * (TEXT_BOUND // 2))
