"""The four dialects the scripted upstream speaks, and the litellm model string and ``api_base`` that reach each.

Read from litellm's source (1.110): ``anthropic/<model>`` posts to ``{api_base}/v1/messages``; ``gemini/<model>``
to ``{api_base}/models/<model>:streamGenerateContent?alt=sse``; ``ollama_chat/<model>`` to ``{api_base}/api/chat``;
``openai/<model>`` to ``{api_base}/chat/completions`` (so its base ends in ``/v1``). Every call is litellm's own
HTTP path to the local server: nothing is mocked.
"""

from __future__ import annotations

from engine.provider.calls import ProviderConfig
from tests.support.upstream import ScriptedUpstream

DIALECTS = ("openai", "anthropic", "gemini", "ollama")
MODELS = {
    "openai": "openai/test-model",
    "anthropic": "anthropic/claude-sonnet-4-5",
    "gemini": "gemini/gemini-2.5-flash",
    "ollama": "ollama_chat/llama3.1",
}
#: Each provider's overload status (Anthropic's own 529; Google, Ollama and OpenAI say 503).
OVERLOADED = {"openai": 503, "anthropic": 529, "gemini": 503, "ollama": 503}


def api_base(dialect: str, upstream: ScriptedUpstream) -> str:
    return upstream.base_url if dialect == "openai" else upstream.root_url


def provider(dialect: str, upstream: ScriptedUpstream, api_key: str) -> ProviderConfig:
    return ProviderConfig(model=MODELS[dialect], api_base=api_base(dialect, upstream), api_key=api_key)
