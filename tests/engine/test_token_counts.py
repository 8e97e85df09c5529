"""The local token count of a history, kept per message, is exactly litellm's count of the whole list.

The context meter and a stopped answer's estimate count every request's history; ``count_messages`` counts each
message once and keeps it. Whatever the messages (text, parts, tool calls and results, any length, repeated or
not) and whichever dialect's model, the sum it makes equals ``litellm.token_counter`` over the list in one call.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.offline import litellm
from engine.provider.tokens import count_messages
from tests.support.dialects import MODELS

WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


def message(role: str, text: str, kind: int) -> dict[str, Any]:
    if role == "tool":
        return {"role": "tool", "tool_call_id": f"call_{kind}", "content": text}
    if role == "assistant" and kind == 1:
        call = {"id": f"call_{kind}", "type": "function", "function": {"name": "calc", "arguments": '{"x": 1}'}}
        return {"role": "assistant", "content": text or None, "tool_calls": [call]}
    if kind == 2:
        return {"role": role, "content": [{"type": "text", "text": text}, {"type": "text", "text": "more"}]}
    return {"role": role, "content": text}


MESSAGES = st.lists(
    st.builds(message, st.sampled_from(["system", "user", "assistant", "tool"]), WORDS, st.integers(0, 2)),
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(messages=MESSAGES, model=st.sampled_from([*MODELS.values(), "openai/gpt-4o-mini"]), again=st.booleans())
def test_a_history_counted_message_by_message_is_litellms_count_of_the_whole_list(
    messages: list[dict[str, Any]], model: str, again: bool
) -> None:
    if again:  # a longer history that repeats what was counted before (kept counts are reused)
        messages = messages + messages
    whole = litellm().token_counter(model=model, messages=messages) if messages else 0
    assert count_messages(model, messages) == whole
