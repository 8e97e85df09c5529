"""Half-written markdown is shown as if it were closed, and nothing the model wrote is changed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ui.markdown.closing import closed
from ui.markdown.safe import render


@pytest.mark.parametrize(
    ("partial", "shown"),
    [
        ("Make it **bold", "<strong>bold</strong>"),
        ("use `pip inst", "<code>pip inst</code>"),
        ("```python\nprint(1)", "print"),
        ("see [the docs](https://exa", 'href="https://exa"'),
        ("~~old", "<s>old</s>"),
    ],
)
def test_a_half_written_marker_renders_as_if_closed_and_no_raw_marker_shows(partial: str, shown: str) -> None:
    html = render(closed(partial))
    assert shown in html
    assert "**" not in html and "```" not in html and "~~" not in html


@given(st.text(alphabet="ab *_`~[]()\n#", max_size=60))
def test_closing_only_ever_appends_and_leaves_balanced_text_alone(text: str) -> None:
    out = closed(text)
    assert out.startswith(text)
    assert closed(out) == out
