"""The offline demo: an OpenAI-compatible model endpoint with realistic pacing and fault tags.

It stands beside the engine and is reached only over HTTP, like any provider: the app mounts
``demo.server.endpoint.DemoModel`` at ``/demo`` and calls it through litellm as ``PROVIDER_MODEL``.

Guarantees: importing the package starts nothing and imports nothing of the app (no ledger, store, engine, ui,
app or main); ``PROVIDER_MODEL`` is the one name the app uses for the demo model.
"""

PROVIDER_MODEL = "openai/ledger-demo"

__all__ = [
    "PROVIDER_MODEL",
    "agent",
    "answers",
    "behavior",
    "continuation",
    "dialects",
    "persona",
    "server",
    "sse",
    "stream",
    "tools_server",
]
