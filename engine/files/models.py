"""What a model takes as input, as litellm knows it (its model map, plus what ``--model-info`` declared).

Guarantees:
- ``declare(model_map)`` keeps a map in litellm's model-map shape (``{"openai/my-model": {"supports_vision":
  true, ...}}``); it is registered with ``litellm.register_model`` once litellm is imported (``register``, called
  by the app at start-up and by every question below), before any answer about a model is given.
- ``takes_images``/``takes_pdf`` are litellm's ``supports_vision``/``supports_pdf_input`` for the model string;
  a model litellm does not know takes neither (never raises).
"""

from __future__ import annotations

import threading
from typing import Any

from engine.offline import litellm

_lock = threading.Lock()
_pending: list[dict[str, Any]] = []


def declare(model_map: dict[str, Any]) -> None:
    with _lock:
        _pending.append(dict(model_map))


def register() -> None:
    """Register the declared maps with litellm (imports it: call off the event loop or after ``ready``)."""
    ll = litellm()
    with _lock:
        maps = list(_pending)
        _pending.clear()
    for model_map in maps:
        ll.register_model(model_map)


def takes_images(model: str) -> bool:
    return _asks("supports_vision", model)


def takes_pdf(model: str) -> bool:
    return _asks("supports_pdf_input", model)


def _asks(question: str, model: str) -> bool:
    register()
    try:
        return bool(getattr(litellm(), question)(model))
    except Exception:  # noqa: BLE001 - litellm raises for models it cannot map
        return False
