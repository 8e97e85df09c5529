"""Wiring, in order: front door → settings → engine → pages, inside NiceGUI's life cycle, over an open store.

Guarantees: the files service (``engine.files.Files``) keeps its bytes in the blob store beside the ledger
(``app.stores.open_blobs``), with ``--max-attachment-mb``; ``--model-info`` (and the demo model's own entry) is
registered with litellm right after its import, before the first turn. The front door (``ui.guard``: Host,
Origin, token, security headers) sits before every route, and NiceGUI's socket.io events act only for the client
whose own socket sent them (``ui.socket_owner``); the
engine starts with the app (before the first page is served): attempts a dead process left streaming are
finalized (on PostgreSQL only those whose instance is gone, by a survivor: ``app.cluster``, made before the
engine as its ``Peers``); litellm's import
(seconds) and the tool servers start in the background while pages are served already, and a turn waits for both
before its own timeouts start. Shutdown cancels every stream with source ``shutdown`` before NiceGUI cancels
background tasks, then flushes and closes the store.
"""

from __future__ import annotations

import asyncio
import gc
import logging

from app.config import AppConfig
from app.memory import MemoryGiver, collect_less_often, drop_unconnected_pages
from app.parts import close_parts, engine_settings, open_parts
from app.probes import probes
from store.api import EventStore

log = logging.getLogger("ledger_chat")
READY_LINE = "Ledger Chat: the model client is loaded"


def wire(config: AppConfig, store: EventStore, token: str | None = None) -> None:
    from nicegui import Client, app, background_tasks

    from app.cluster import Cluster
    from app.stores import close_blobs, open_shares
    from engine.attempts import ALONE
    from engine.commands import build_engine
    from engine.files import models
    from engine.offline import rehearse, start_import
    from engine.provider import warm_up
    from engine.tools import AppHub
    from ui.access import AccessPolicy
    from ui.context import PageContext
    from ui.guard import Guard
    from ui.pages import register_pages
    from ui.socket_owner import bind_events_to_sockets

    policy = AccessPolicy.for_bind(config.host, config.port, token=token, allowed_hosts=config.allowed_hosts)
    people, door = None, None
    if config.team:  # team mode: everyone signs in (ui.signin); sessions and accounts beside the ledger
        from app.stores import open_accounts
        from engine.people import People
        from ui.signin import TeamDoor

        people = People(open_accounts(config, str(getattr(store, "instance", "app"))))
        oidc = None
        if config.accounts == "oidc":  # sign-in at the provider (ui.oidc), no password form
            from ui.oidc import OidcDoor, OidcSettings

            assert config.oidc_issuer and config.oidc_client_id, "checked by load_config"
            settings = OidcSettings(
                config.oidc_issuer,
                config.oidc_client_id,
                config.oidc_client_secret,
                config.oidc_admin_group,
                config.oidc_member_group,
            )
            oidc = OidcDoor(settings, people)
        door = TeamDoor(people, oidc)
    app.add_middleware(Guard, policy=policy, door=door)
    bind_events_to_sockets()  # a socket.io message acts only for the client whose socket sent it
    opened = open_parts(config, store, token)  # the provider, tool servers, files, grants, presets (app.parts)
    provider, hub = opened.provider, opened.hub
    context = PageContext(
        model_label="demo model (offline)" if config.is_demo else config.model,
        demo=config.is_demo,
        people=people,
        oidc=config.accounts == "oidc",
        admin_can_read=config.admin_can_read,
        share_store=open_shares(config, store),  # share links' lookup (store.shares)
    )
    if config.is_demo or "demo" in config.models:
        from demo.server import DemoModel

        app.mount("/demo", DemoModel(chunk_delay=config.demo_chunk_delay, transient_faults=True).app)
    clusters: list[Cluster] = []

    async def startup() -> None:
        # on a thread, pages are served meanwhile; then everything alive so far (litellm's modules, the store's
        # index) is moved out of the garbage collector's way: a full collection no longer walks it (gc.freeze)
        def loaded() -> None:
            models.register()
            warm_up(provider.model)
            rehearse(provider.model)  # what litellm builds on a first request is frozen with the rest
            gc.freeze()
            print(READY_LINE, flush=True)

        start_import(then=loaded)
        settings = engine_settings(config, opened, lambda coro, name: background_tasks.create(coro, name=name), token)
        if config.database_url is not None:  # several instances may share the database: follow them, own
            from store.postgres import PgStore

            assert isinstance(store, PgStore)
            clusters.append(Cluster(store, config.database_url))
        engine = build_engine(store, settings, hub, peers=clusters[-1] if clusters else ALONE)
        if isinstance(hub, AppHub):  # a turn uses the remote servers its conversation's owner uses
            hub.owner_of = lambda cid: c.owner if (c := engine.conversation(cid)) is not None else None
            if clusters and hub.remote is not None:  # a sign-in's callback may come back to another instance
                clusters[-1].sign_ins.attach(hub.remote.signins)
        from app.telemetry import start_telemetry

        start_telemetry(config.telemetry, engine)  # --otlp-endpoint: follows every event, flushed at shutdown
        recovered = await clusters[-1].start(engine) if clusters else engine.recover()
        if recovered:
            log.warning("finalized %d answer(s) interrupted by the last shutdown", len(recovered))
        context.engine = engine
        gc.collect()
        gc.freeze()  # what start-up made (the index, the engine) lives on: full collections never walk it again
        collect_less_often()  # app.memory: streaming is not mostly collecting
        if hub is not None:  # the tools panel shows "starting" meanwhile; a turn waits for them to settle
            background_tasks.create(hub.start(), name="tool servers")

    async def shutdown() -> None:
        if context.engine is not None:
            await context.engine.shutdown()
        if clusters:
            await clusters.pop().close()
        await asyncio.to_thread(store.close)
        await close_parts(opened)  # files, presets, the tool servers and their grants
        if people is not None:
            await asyncio.to_thread(close_blobs, people.store)
        if context.share_store is not None:
            await asyncio.to_thread(close_blobs, context.share_store)

    app.on_startup(startup)
    app.on_shutdown(shutdown)  # registered before NiceGUI's own teardown, which cancels background tasks
    register_pages(context)
    giver = MemoryGiver(
        lambda: context.engine is not None and bool(context.engine.streaming_here()), lambda: len(Client.instances)
    )
    app.timer(5.0, giver.check)
    app.timer(5.0, drop_unconnected_pages)
    if people is not None:
        from ui.sessions import SessionSweep

        app.timer(SessionSweep.EVERY, SessionSweep(people, context).sweep)  # ended sessions out within ~2 s
    probes(app)
