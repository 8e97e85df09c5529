"""Local token estimates for when the provider sent no usage (always the case for a cancelled stream).

Guarantees: never raises and never reaches the network (litellm's bundled tokenizer, else ~4 chars a token).
"""

from __future__ import annotations

import logging
from typing import Any

from engine.offline import litellm

log = logging.getLogger("ledger_chat.tokens")


def count_text(model: str, text: str) -> int:
    if not text:
        return 0
    try:
        return int(litellm().token_counter(model=model, text=text))
    except Exception:  # noqa: BLE001 - an estimate must never break finalization
        log.debug("token_counter failed for %s; using the 4-chars rule", model, exc_info=True)
        return max(1, len(text) // 4)


def count_messages(model: str, messages: list[dict[str, Any]]) -> int:
    if not messages:
        return 0
    try:
        return int(litellm().token_counter(model=model, messages=messages))
    except Exception:  # noqa: BLE001
        return sum(max(1, len(str(m.get("content") or "")) // 4) + 4 for m in messages)


def warm_up(model: str) -> None:
    """Load the tokenizer once (about 0.5 s) so the first Stop does not pay for it."""
    count_text(model, "warm up")
