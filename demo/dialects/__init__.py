"""The wire dialects the scripted upstream speaks, by name: each is one provider's request, stream and errors.

Guarantees: ``DIALECTS`` maps ``openai``, ``anthropic``, ``gemini`` and ``ollama`` to their ``Dialect``
(``demo.dialects.base``); one ``Behavior`` drives any of them, through ``demo.stream.paced``.
"""

from __future__ import annotations

from demo.dialects import anthropic, gemini, ollama, openai
from demo.dialects.base import Dialect, Parsed

DIALECTS: dict[str, Dialect] = {
    "openai": openai.DIALECT,
    "anthropic": anthropic.DIALECT,
    "gemini": gemini.DIALECT,
    "ollama": ollama.DIALECT,
}
__all__ = ["DIALECTS", "Dialect", "Parsed"]
