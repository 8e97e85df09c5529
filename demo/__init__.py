"""The offline demo: an OpenAI-compatible model endpoint with realistic pacing and fault tags.

It stands beside the engine and is reached only over HTTP, like any provider: the app mounts
``demo.endpoint.DemoModel`` at ``/demo`` and calls it through litellm as ``PROVIDER_MODEL``.
"""

PROVIDER_MODEL = "openai/ledger-demo"
