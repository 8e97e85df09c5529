"""How to call each model, which tool servers run, and the check that the model can be called at all.

Guarantees: ``demo`` is the built-in demo endpoint on this server, reached through the front door with the access
token as its key; only the servers of ``--mcp-config`` run (the bundled demo server only with the demo model and
no config; none with ``--no-tools``); ``check_model`` refuses a model litellm cannot route, or one whose provider key
is missing, with one line naming it (a ``ConfigError``); it also refuses ``--api-base`` credentials
(``user:password@``, sent as HTTP Basic auth: ``engine.provider.url_credentials``) together with a key for an
OpenAI-compatible provider, whose key goes in the same ``Authorization`` header.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.config import AppConfig, ConfigError
from engine.provider import ProviderConfig
from engine.tools import ServerConfig, load_tool_config

ROOT = Path(__file__).resolve().parents[1]


def provider_config(config: AppConfig, model: str | None = None, token: str | None = None) -> ProviderConfig:
    """How to call ``model`` (default: ``--model``)."""
    model = model or config.model
    if model == "demo":
        from demo import PROVIDER_MODEL

        base = (config.api_base if config.is_demo else None) or f"{config.local_url}/demo/v1"
        return ProviderConfig(model=PROVIDER_MODEL, api_base=base, api_key=token or "demo-needs-no-key")
    return ProviderConfig(model=model, api_base=config.api_base)


def tool_servers(config: AppConfig) -> tuple[ServerConfig, ...]:
    """The configured tool servers: the --mcp-config file, else the bundled demo server with the demo model."""
    if config.no_tools:
        return ()
    if config.mcp_config is not None:
        return load_tool_config(config.mcp_config)
    if not config.is_demo:
        return ()
    return (ServerConfig(name="demo", command=sys.executable, args=("-m", "demo.tools_server"), cwd=str(ROOT)),)


def check_model(config: AppConfig) -> None:
    """Refuse to start with a model litellm cannot route, or without the provider's key."""
    from engine.offline import litellm

    ll = litellm()
    try:
        ll.get_llm_provider(config.model, api_base=config.api_base)
    except Exception:  # noqa: BLE001 - litellm raises several types here
        raise ConfigError(
            f"--model: {config.model!r} is not a model litellm can route; "
            "use a provider prefix such as 'openai/gpt-4o-mini'"
        ) from None
    if config.api_base:
        _one_authorization(ll, config.model, config.api_base)
        return
    env = ll.validate_environment(model=config.model)
    missing = env.get("missing_keys") or []
    if missing:
        raise ConfigError(f"--model: {config.model} needs {', '.join(missing)} in the environment")


def _one_authorization(ll: Any, model: str, api_base: str) -> None:
    import os

    from engine.provider import COMPATIBLE, split_credentials

    base, basic = split_credentials(api_base)
    if basic is None:
        return
    _, provider, key, _ = ll.get_llm_provider(model, api_base=base)
    if provider == "openai":
        key = key or os.environ.get("OPENAI_API_KEY")
    if provider in COMPATIBLE and key:
        raise ConfigError(
            f"--api-base: its user:password@ goes to the server as HTTP Basic auth in the Authorization header, where "
            f"the {provider} API key set in the environment would go too; keep one (remove user:password@ from "
            "--api-base, or unset the key)"
        )
