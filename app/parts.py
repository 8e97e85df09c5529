"""What an engine is built on, opened the same way for the web app (``app.wiring``) and the editor bridge
(``app.acp``): the provider, the tool servers and their hub, the files, the approval grants, the presets and the spend
limits beside the store, the models declared to litellm, and the engine's settings.

Guarantees: nothing here imports NiceGUI or starts anything (the hub is made, not started: whoever serves starts
it; it has the remote servers people add, ``app.remote``, unless ``--no-tools``); ``close_parts`` closes what
``open_parts`` opened, the hub stopped before its grants are closed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from app.config import AppConfig, load_model_info
from app.providers import provider_config, tool_servers
from app.remote import close_remote, open_remote
from app.stores import close_blobs, open_blobs, open_grants, open_limits, open_presets
from engine.files import Files, models, retouch
from engine.provider import ProviderConfig
from engine.tools import AppHub, ServerConfig, ToolHub
from engine.turns import EngineSettings
from store.api import EventStore
from store.grants import GrantStore
from store.limits import LimitStore
from store.presets import PresetStore

Spawner = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]


@dataclass(frozen=True, slots=True)
class Opened:
    """The parts beside the store an engine is built on (``open_parts``)."""

    provider: ProviderConfig
    servers: tuple[ServerConfig, ...]
    files: Files
    grants: GrantStore | None
    presets: PresetStore
    hub: ToolHub | None
    limits: LimitStore  # spend limits beside the accounts (``store.limits``)


def open_parts(config: AppConfig, store: EventStore, token: str | None = None) -> Opened:
    """The provider, tool servers, files, grants and presets of ``config`` beside ``store``; the models it names
    declared to litellm (registered once litellm is imported)."""
    provider = provider_config(config, token=token)
    servers = tool_servers(config)
    files = Files(open_blobs(config, store), config.file_limits)
    grants = open_grants(config, store) if servers else None  # server approval grants (store.grants)
    presets = open_presets(config, store)  # agent presets beside the ledger (a file, or a table)
    remote = open_remote(config, store, files.blobs, lambda: {s.name for s in servers})  # people add (app.remote)
    if remote is not None and grants is None:
        grants = open_grants(config, store)
    logs = config.data_dir / "logs"
    hub = AppHub(servers, remote, log_dir=logs, blobs=files.blobs, grants=grants) if servers or remote else None
    if hub is not None:
        hub.retouch = retouch  # a tool's images are kept re-encoded without metadata, as attachments are
    if hub is not None and remote is not None:
        remote.watch = hub.watch  # one record of changed resources (engine.tools.resource_watch) for every server
    if config.model_info is not None:
        models.declare(load_model_info(config.model_info))  # registered with litellm once it is imported
    if config.is_demo or "demo" in config.models:  # the demo model reads images and PDFs (demo.agent)
        from demo import PROVIDER_MODEL

        models.declare({PROVIDER_MODEL: {"supports_vision": True, "supports_pdf_input": True, "mode": "chat"}})
    instance = str(getattr(store, "instance", "app"))
    return Opened(provider, servers, files, grants, presets, hub, open_limits(config, instance))


def engine_settings(config: AppConfig, opened: Opened, spawn: Spawner, token: str | None = None) -> EngineSettings:
    """The engine's settings: ``config``'s limits, models and titles, ``opened``'s files and presets."""
    return EngineSettings(
        provider=opened.provider,
        limits=config.limits,
        spawn=spawn,
        others=tuple(provider_config(config, model, token) for model in config.models),
        files=opened.files,
        presets=opened.presets,
        titles=config.titles == "model",  # (engine.policies.titles)
        spend_limits=opened.limits,
        spend_limit=config.default_limit,  # --spend-limit (engine.spend)
    )


async def close_parts(opened: Opened) -> None:
    """Close the blobs and presets, stop the tool servers, then close their grants (each off the loop)."""
    await asyncio.to_thread(close_blobs, opened.files.blobs)
    await asyncio.to_thread(close_blobs, opened.presets)
    await asyncio.to_thread(close_blobs, opened.limits)
    if opened.hub is not None:
        await opened.hub.stop()
        await asyncio.to_thread(close_blobs, opened.hub.grants)
        if isinstance(opened.hub, AppHub):
            await asyncio.to_thread(close_remote, opened.hub.remote)
