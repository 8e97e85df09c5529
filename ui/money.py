"""Costs in words: an attempt's, a turn's and a chat's, from ``engine.provider.cost`` (the page never prices anything).

Guarantees: an amount is US dollars with enough digits to tell small answers apart (``$0.00042``); ``~`` marks an
amount made from locally counted tokens (the provider reported none, as for every stopped answer); an unknown
price is said in words ("cost unknown"), never shown as $0; a sum with unknown parts says how many; nothing is
shown while litellm's map is not loaded yet.
"""

from __future__ import annotations

from engine.provider import Cost, attempt_cost, chat_cost, turn_cost
from ledger.state import AttemptState, ConversationState

NOT_CHARGED = "not charged"


def dollars(usd: float) -> str:
    if usd == 0:
        return "$0"
    if usd >= 1:
        return f"${usd:,.2f}"
    if usd >= 0.01:
        return f"${usd:.3f}"
    return f"${usd:.2g}" if usd < 0.00001 else f"${usd:.5f}".rstrip("0")


def cost_words(cost: Cost) -> str:
    """One cost as the page shows it ("" while it cannot be known yet: running, or the map still loading)."""
    if cost.pending and cost.usd is None:
        return ""
    if cost.usd is None:
        return "cost unknown"
    words = ("~" if cost.estimated else "") + dollars(cost.usd)
    if cost.unknown:
        words += f" + {cost.unknown} unknown"
    return words


def answer_cost(conv: ConversationState, attempt: AttemptState) -> str:
    """The footer's cost: this attempt's ("not charged" for one the provider refused before any token), and the
    turn's over every attempt when there were several."""
    m = attempt.metrics
    refused = attempt.status == "failed" and m is not None and not (m.input_tokens or m.output_tokens)
    mine = NOT_CHARGED if refused else cost_words(attempt_cost(attempt))
    message = conv.messages.get(attempt.message_id)
    if not mine or message is None or len(message.attempt_ids) < 2:
        return mine
    turn = cost_words(turn_cost(conv, attempt.message_id))
    return f"{mine} (turn {turn}, {len(message.attempt_ids)} attempts)" if turn else mine


def chat_words(conv: ConversationState | None, cost: Cost | None = None) -> str:
    """The header's cost of the whole chat, every attempt on every branch ("" for a chat with none yet); ``cost``:
    ``chat_cost(conv)`` when the caller has it already."""
    if conv is None or not conv.attempts:
        return ""
    words = cost_words(cost if cost is not None else chat_cost(conv))
    return f"Chat: {words}" if words else ""


def title_of(cost: Cost) -> str:
    """The native tooltip that says how a cost was made."""
    parts = ["Priced from litellm's cost map (and --model-info)"]
    if cost.estimated:
        parts.append("~: some tokens were counted locally, the provider reported none")
    if cost.unknown:
        parts.append(f"{cost.unknown} attempt(s) of a model without a known price are not included")
    return "; ".join(parts)
