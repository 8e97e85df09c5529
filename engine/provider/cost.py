"""What attempts cost, priced from litellm's local cost map: per attempt, per turn and per chat.

Why a read-side projection and not a field on the attempt's end: the ledger records the facts (the tokens each
step reported, or counted locally and marked so: ``TurnMetrics``); a price is a reading of a price table that
changes (``--model-info`` added for a model, a corrected map). Pricing at read time lets a price given later
price old chats too, keeps the event format free of money, and cannot disagree with the tokens it is made from.
The export carries the sums as computed when it was written (``costs.json`` with the prices' source).

Guarantees:
- Every attempt that ended is priced whatever its purpose or end (done, stopped, failed, recovered, and any other
  kind of attempt that records ``persisted`` metrics): input, output, cached-read and cache-write tokens as
  ``TurnMetrics`` holds them (reasoning tokens are part of the output), through ``litellm.cost_per_token``.
- A model the map (with ``--model-info``'s ``input_cost_per_token``/``output_cost_per_token``, registered with
  ``litellm.register_model``) gives no price for is unknown (``usd`` None), never zero; an attempt still running,
  or priced before litellm is imported, is unknown too (``pending``).
- ``estimated``: some count was made locally (the provider sent no usage, as for every stopped stream): shown
  with ``~``. Sums (a turn, a chat) add the known attempts, say how many were unknown and are estimated when any
  part is.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from engine.files import models
from engine.offline import imported
from ledger.events import TurnMetrics
from ledger.state import AttemptState, ConversationState


@dataclass(frozen=True, slots=True)
class Cost:
    """US dollars (None: unknown); ``estimated``: from locally counted tokens; ``unknown``: attempts in a sum that
    had no price; ``attempts``: how many attempts it sums."""

    usd: float | None
    estimated: bool = False
    unknown: int = 0
    attempts: int = 1
    pending: bool = False


UNKNOWN = Cost(usd=None, unknown=1)
PRICE_KEYS = ("input_cost_per_token", "output_cost_per_token")
NOTHING = Cost(usd=0.0, attempts=0)


def attempt_cost(attempt: AttemptState) -> Cost:
    """What one attempt cost (unknown while it runs)."""
    metrics = attempt.metrics
    if metrics is None:
        return Cost(usd=None, unknown=1, pending=True)
    return price(attempt.model, metrics)


def price(model: str, metrics: TurnMetrics) -> Cost:
    ll = imported()
    if ll is None:
        return Cost(usd=None, unknown=1, pending=True)
    usd = _usd(
        model, metrics.input_tokens, metrics.output_tokens, metrics.cached_tokens, metrics.cache_write_tokens,
        metrics.reasoning_tokens,
    )  # fmt: skip
    estimated = metrics.input_is_estimated or metrics.output_is_estimated
    return Cost(usd=usd, estimated=estimated, unknown=int(usd is None))


def total(costs: Iterable[Cost]) -> Cost:
    """The sum of ``costs``: the known ones added, the unknown ones counted (all unknown: ``usd`` None)."""
    usd, estimated, unknown, count, pending, known = 0.0, False, 0, 0, False, 0
    for cost in costs:
        count += cost.attempts
        unknown += cost.unknown
        pending = pending or cost.pending
        if cost.usd is not None:
            usd += cost.usd
            estimated = estimated or cost.estimated
            known += 1
    if count == 0:
        return NOTHING
    return Cost(usd=usd if known else None, estimated=estimated, unknown=unknown, attempts=count, pending=pending)


def turn_cost(conv: ConversationState, message_id: str) -> Cost:
    """Every attempt of an answer (Retries included: each was paid for)."""
    message = conv.messages.get(message_id)
    if message is None:
        return NOTHING
    return total(attempt_cost(conv.attempts[a]) for a in message.attempt_ids if a in conv.attempts)


def chat_cost(conv: ConversationState) -> Cost:
    """Every attempt of the chat, on every branch."""
    return total(attempt_cost(a) for a in conv.attempts.values())


@functools.lru_cache(maxsize=4096)
def _usd(model: str, prompt: int, completion: int, cached: int, written: int, reasoning: int) -> float | None:
    ll = imported()
    if ll is None or not has_price(model):
        return None
    usage = ll.Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details={"cached_tokens": cached},
        completion_tokens_details={"reasoning_tokens": reasoning},
        cache_creation_input_tokens=written,
    )
    try:
        prompt_usd, completion_usd = ll.cost_per_token(model=model, usage_object=usage)
    except Exception:  # noqa: BLE001 - litellm raises several types for a model it cannot price
        return None
    return float(prompt_usd) + float(completion_usd)


def has_price(model: str) -> bool:
    """Whether the cost map (with ``--model-info``) names a price per token for ``model``: an entry that only
    gives a window, say, is no price (litellm would read it as 0)."""
    ll = imported()
    if ll is None:
        return False
    models.register()
    try:
        key = ll.get_model_info(model).get("key") or model
    except Exception:  # noqa: BLE001 - not in the map at all
        return False
    for name in (key, model, model.split("/", 1)[-1]):
        entry = ll.model_cost.get(name)
        if isinstance(entry, dict) and any(entry.get(k) is not None for k in PRICE_KEYS):
            return True  # a price of 0 is a price (a free model); a key litellm filled with None is none
    return False


def as_dict(cost: Cost) -> dict[str, object]:
    return {"usd": cost.usd, "estimated": cost.estimated, "unknown_attempts": cost.unknown, "attempts": cost.attempts}


class CostReport:
    """The export's ``costs.json``, a chat at a time (``add``): every attempt's cost, each chat's sum and the sum of
    all (unknown: ``null``)."""

    def __init__(self) -> None:
        self.chats: dict[str, object] = {}
        self.sums: list[Cost] = []

    def add(self, conv: ConversationState) -> None:
        each = {a.attempt_id: {"model": a.model, **as_dict(attempt_cost(a))} for a in conv.attempts.values()}
        chat = chat_cost(conv)
        self.sums.append(chat)
        self.chats[conv.conversation_id] = {"total": as_dict(chat), "attempts": each}

    def as_dict(self) -> dict[str, object]:
        return {
            "currency": "USD",
            "priced_with": "litellm's local cost map and --model-info, when this export was written",
            "total": as_dict(total(self.sums)),
            "chats": self.chats,
        }
