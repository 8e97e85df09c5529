"""A tool's whole result (``ledger.values.ToolPart``), as the model's provider takes it.

Guarantees:
- ``tool_messages`` turns one tool history entry into the messages a request carries for it: always exactly one
  ``role: tool`` message for its ``tool_call_id`` (first), whose content is the result's text; binary parts are
  described in words (kind, size, media type) when the provider cannot take them in a tool message, and, where the
  provider allows it, follow as parts of one later user message.
- ``read`` gives a blob's bytes by sha256 (None when it is gone: the part is described, never dropped silently).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ledger.history import HistoryEntry

Read = Callable[[str], bytes | None]


def tool_messages(entry: HistoryEntry, model: str, read: Read) -> list[dict[str, Any]]:
    """The messages for one ``role == "tool"`` entry (text only until the rich forms land)."""
    return [entry.as_message()]
