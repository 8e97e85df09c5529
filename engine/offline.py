"""Imports litellm once, offline: no cost-map download, no tokenizer fetch (docs/architecture.md).

Guarantees: ``litellm()`` returns the module, importing it on first use only, with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` and ``LITELLM_OFFLINE_MODE=true`` set before the import, and litellm's
own telemetry and callbacks off. Import costs 4-7 s here: call it once at start-up, never per page.
"""

from __future__ import annotations

import os
import threading
from types import ModuleType

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "ERROR")

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
