"""Wires the app: the engine's life cycle inside NiceGUI's, the pages, and the built-in demo model.

Guarantees:
- Start-up (synchronous, before the first page is served) imports litellm and its tokenizer once, opens the
  store (reporting damaged files), replays it and finalizes attempts a dead process left streaming.
- Shutdown cancels every stream with source ``shutdown`` before NiceGUI cancels background tasks, so partials
  are kept and upstreams closed through the one cancel path; then everything is flushed to disk.
- The demo model is an OpenAI-compatible endpoint mounted at ``/demo/v1`` on the same server, called through
  litellm over real HTTP like any provider.
"""

from __future__ import annotations

import asyncio
import logging

from nicegui import app, background_tasks, ui

import ui.context as ctx_module
from engine.config import AppConfig
from engine.engine import Engine
from engine.offline import litellm
from engine.provider import ProviderConfig
from engine.settings import EngineSettings
from engine.tokens import warm_up
from engine.upstream import Upstream
from ledger.store import Store
from ui.chat_page import ChatPage
from ui.context import AppContext

log = logging.getLogger("ledger_chat")
DEMO_MODEL = "openai/ledger-demo"


def build(config: AppConfig, api_base_for_demo: str | None = None) -> AppContext:
    """Register pages and life-cycle handlers; the engine starts with the app."""
    provider = provider_config(config, api_base_for_demo)
    label = "demo model (offline)" if config.is_demo else config.model
    context = ctx_module.CONTEXT = AppContext(config=config, model_label=label)
    if config.is_demo:
        demo = Upstream(chunk_delay=config.demo_chunk_delay, transient_faults=True)
        app.mount("/demo", demo.app)

    def startup() -> None:  # synchronous: the engine is ready before the first page is served
        litellm()
        store = Store.open(config.data_dir)
        settings = EngineSettings(
            provider=provider,
            first_chunk_timeout=config.first_chunk_timeout,
            idle_timeout=config.idle_timeout,
            max_resends=config.max_resends,
            max_input_chars=config.max_input_chars,
            leave_policy=config.leave_policy,  # type: ignore[arg-type]
            spawn=lambda coro, name: background_tasks.create(coro, name=name),
        )
        engine = Engine(store, settings)
        recovered = engine.recover()
        context.problems = list(store.problems)
        if recovered:
            log.warning("finalized %d answer(s) interrupted by the last shutdown", len(recovered))
        context.engine = engine
        warm_up(provider.model)

    async def shutdown() -> None:
        if context.engine is not None:
            await context.engine.shutdown()
            await asyncio.to_thread(context.engine.store.close)

    app.on_startup(startup)
    app.on_shutdown(shutdown)  # registered before NiceGUI's own teardown, which cancels background tasks

    @ui.page("/")
    def index() -> None:
        ChatPage(context.require_engine(), None).build()

    @ui.page("/chat/{cid}")
    def chat(cid: str) -> None:
        engine = context.require_engine()
        if engine.conversation(cid) is None:
            ui.notify("That conversation does not exist (it may have been deleted).", type="warning")
            ChatPage(engine, None).build()
            ui.navigate.history.replace("/")
            return
        ChatPage(engine, cid).build()

    return context


def provider_config(config: AppConfig, api_base_for_demo: str | None) -> ProviderConfig:
    if config.is_demo:
        base = config.api_base or api_base_for_demo or f"http://127.0.0.1:{config.port}/demo/v1"
        return ProviderConfig(model=DEMO_MODEL, api_base=base, api_key="demo-needs-no-key")
    return ProviderConfig(model=config.model, api_base=config.api_base)
