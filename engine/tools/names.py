"""Tool names and parameter schemas as every provider takes them (the hub offers tools through these).

Guarantees: ``safe_name`` is a function name every provider accepts (``[A-Za-z0-9_-]{1,64}``), unique among the
names already taken (``_2``, ``_3``, … when taken); ``parameters`` is a JSON schema providers accept for function
parameters (an object, even for a tool without inputs; no ``title`` or ``$schema``).
"""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any


def safe_name(name: str, taken: Container[str]) -> str:
    """A function name every provider accepts (``[A-Za-z0-9_-]{1,64}``), unique among ``taken``."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "tool"
    candidate, n = safe, 2
    while candidate in taken:
        candidate, n = f"{safe[:60]}_{n}", n + 1
    return candidate


def parameters(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema providers accept for function parameters (an object, even for a tool without inputs)."""
    out = {k: v for k, v in schema.items() if k not in ("title", "$schema")}
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return out
