"""Imports litellm once, offline: no cost-map download, no tokenizer fetch (docs/architecture.md).

Guarantees: ``litellm()`` returns the module, importing it on first use only, with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true`` set before the import, and litellm's
own telemetry and callbacks off. Import costs 4-7 s here: ``start_import`` begins it on a worker thread at
start-up (the app serves pages meanwhile); ``await ready()`` before a model call waits for it without blocking the
event loop, so no request's timeout ever includes the import.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from types import ModuleType

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "ERROR")

log = logging.getLogger("ledger_chat.offline")
_lock = threading.Lock()
_module: ModuleType | None = None


def litellm() -> ModuleType:
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                import litellm as module

                module.telemetry = False
                module.suppress_debug_info = True
                module.drop_params = True
                _module = module
    return _module


def start_import(then: Callable[[], object] | None = None) -> None:
    """Import litellm on a daemon thread (then run ``then`` there, e.g. loading a tokenizer); returns at once."""
    if _module is not None and then is None:
        return

    def work() -> None:
        litellm()
        if then is not None:
            then()

    threading.Thread(target=work, name="import-litellm", daemon=True).start()


def rehearse(model: str) -> None:
    """One streamed completion that litellm answers itself (``mock_response``: nothing reaches the network), on the
    calling thread: the modules, models and caches litellm builds on a first request exist afterwards, so start-up
    can move them out of the garbage collector's way with the rest (``gc.freeze``) instead of every full collection
    walking them for the life of the process (issue 11). Never raises."""

    async def stream() -> None:
        response = await litellm().acompletion(
            model=model,
            messages=[{"role": "user", "content": "warm up"}],
            mock_response="warm up",
            stream=True,
            stream_options={"include_usage": True},
        )
        async for _ in response:
            pass

    try:
        asyncio.run(stream())
    except Exception:  # noqa: BLE001 - a rehearsal that fails only leaves the first request slower
        log.debug("the rehearsal stream failed", exc_info=True)


def imported() -> ModuleType | None:
    """The module if its import has finished, else None (never waits: for readers on the event loop)."""
    return _module


async def ready() -> ModuleType:
    """The module, once imported; waits on a worker thread while the import runs elsewhere."""
    return _module if _module is not None else await asyncio.to_thread(litellm)
