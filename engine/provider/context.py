"""The context meter: how many tokens a history takes as it would be sent, against the model's input window.

Guarantees:
- ``input_window(model)`` is litellm's ``max_input_tokens`` for the model string (its own map, plus what
  ``--model-info`` declared: ``engine.files.models``), else its ``max_tokens`` when the map has only that; None
  when litellm does not know the model (then only the count is shown, and nothing is compacted by itself). Never
  raises.
- ``count(entries, model, read, instructions)`` counts the messages exactly as a request would carry them (an
  agent preset's instructions first) (files as content
  parts, ``engine.files.content``; an inline image handed to the counter cut to its header, ``engine.provider.tokens``):
  litellm's ``token_counter`` for the model, off the event loop. Never raises.
- ``Meter`` is what the page shows: ``used`` tokens of ``window`` (None: unknown), ``warn`` from ``WARN_AT``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from engine.files import Read, messages_async, models
from engine.offline import litellm, ready
from engine.provider.tokens import count_messages
from ledger.history import HistoryEntry

WARN_AT = 0.8


@dataclass(frozen=True, slots=True)
class Meter:
    """How full the next request is: ``used`` tokens of the model's ``window`` (None when unknown)."""

    used: int
    window: int | None
    model: str

    @property
    def ratio(self) -> float | None:
        return self.used / self.window if self.window else None

    @property
    def warn(self) -> bool:
        return self.ratio is not None and self.ratio >= WARN_AT

    @property
    def over(self) -> bool:
        return self.window is not None and self.used > self.window


def input_window(model: str) -> int | None:
    """The model's input window in tokens, or None when litellm does not know it (see the module's guarantees)."""
    models.register()
    try:
        info = litellm().get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises for models it cannot map
        return None
    window = info.get("max_input_tokens") or info.get("max_tokens")
    return int(window) if isinstance(window, int | float) and window > 0 else None


async def window_of(model: str) -> int | None:
    """``input_window`` once litellm is imported, off the event loop."""
    await ready()
    return await asyncio.to_thread(input_window, model)


async def count(entries: Iterable[HistoryEntry], model: str, read: Read, instructions: str = "") -> int:
    """The tokens of these entries as a request would send them (see the module's guarantees), after an agent
    preset's ``instructions`` when there are any (as ``engine.provider.preset_request.with_instructions``
    sends them)."""
    await ready()
    messages = await messages_async(tuple(entries), model, read)
    if instructions:
        messages = [{"role": "system", "content": instructions}, *messages]
    return await asyncio.to_thread(count_messages, model, messages)


async def measure(entries: Iterable[HistoryEntry], model: str, read: Read, instructions: str = "") -> Meter:
    entries = tuple(entries)
    window, used = await asyncio.gather(window_of(model), count(entries, model, read, instructions))
    return Meter(used=used, window=window, model=model)
