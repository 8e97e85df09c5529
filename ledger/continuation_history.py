"""The history a request of an attempt starts from, a continuation's included (docs/ledger.md, "Continue").

Guarantees (pure; the engine says whether the model takes an assistant prefill,
``engine.provider.calls.takes_prefill``):
- For an attempt that continues none, exactly ``ledger.history.model_history`` before its message.
- For a continuation: that history, then the answer it continues (``ledger.history.answer_entries`` of the attempt
  in ``continues``: its tool steps whole, every call with its one tool message, and its text, the prefix once), so
  the request's last assistant content is the interrupted prefix. With ``prefill`` that prefix is the last
  message, for the model to continue (without its trailing whitespace, which providers refuse there); otherwise
  one user message follows it (``CONTINUE_INSTRUCTION``) asking the model to go on where it stopped. A prefix that
  ends with tool results is sent as it is: the model goes on from them.
- A continuation's later steps (tool calls) add its own entries after this, as any attempt's do (``engine.turns.turn``).

The first request of a continuation of "Half an ans" (asked "tell me"), in OpenAI's shape::

    prefill:    [{"role": "user", "content": "tell me"}, {"role": "assistant", "content": "Half an ans"}]
    otherwise:  [{"role": "user", "content": "tell me"}, {"role": "assistant", "content": "Half an ans"},
                 {"role": "user", "content": CONTINUE_INSTRUCTION}]

and every later request sends that answer as one message: ``{"role": "assistant", "content": "Half an answer."}``
once the continuation wrote "wer.".
"""

from __future__ import annotations

from dataclasses import replace

from ledger.history import TOOL_RESULT_CHARS, HistoryEntry, answer_entries, model_history
from ledger.state import ConversationState

CONTINUE_INSTRUCTION = (
    "Your previous answer was cut off. Continue it exactly where it stopped, mid-sentence or mid-word if need be: "
    "do not repeat anything already written and add no preamble."
)


def request_history(
    conv: ConversationState, attempt_id: str, *, prefill: bool, tool_result_chars: int = TOOL_RESULT_CHARS
) -> tuple[HistoryEntry, ...]:
    """The history the first request of ``attempt_id`` sends (see the module's guarantees)."""
    attempt = conv.attempts[attempt_id]
    before = model_history(conv, until_message_id=attempt.message_id, tool_result_chars=tool_result_chars)
    parent = conv.attempts.get(attempt.continues or "")
    if parent is None or parent.message_id != attempt.message_id:
        return before
    prefix = answer_entries(conv, parent, tool_result_chars)
    if not prefix:
        return before
    last = prefix[-1]
    if last.role != "assistant" or last.tool_calls:
        return (*before, *prefix)
    trimmed = (last.content or "").rstrip()
    if prefill and trimmed:
        return (*before, *prefix[:-1], replace(last, content=trimmed))
    asked = HistoryEntry(role="user", content=CONTINUE_INSTRUCTION, message_id=attempt.message_id)
    return (*before, *prefix, asked)
