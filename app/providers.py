"""How to call each model, which tool servers run, and the check that the model can be called at all.

Guarantees: ``demo`` is the built-in demo endpoint on this server, reached through the front door with the access
token as its key; only the servers of ``--mcp-config`` run (the bundled demo server only with the demo model and
no config; none with ``--no-tools``); ``check_model`` refuses a model litellm cannot route, or one whose provider key
is missing, with one line naming it (a ``ConfigError``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from app.config import AppConfig, ConfigError
from engine.provider import ProviderConfig
from engine.tools.config import ServerConfig, load_tool_config

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
        return
    env = ll.validate_environment(model=config.model)
    missing = env.get("missing_keys") or []
    if missing:
        raise ConfigError(f"--model: {config.model} needs {', '.join(missing)} in the environment")
