#!/usr/bin/env python3
"""Ledger Chat: a browser chat workbench whose streams can be trusted. This file wires the app.

    python main.py                       # the app with the offline demo model on http://127.0.0.1:8080
    python main.py --model openai/gpt-4o-mini   # a real model (OPENAI_API_KEY from the environment)
    python main.py export [--data-dir DIR | --database-url URL] [--conversation ID] > ledger.jsonl
    python main.py migrate --from-data-dir DIR --database-url URL   # copy a TinyDB ledger into PostgreSQL

Every option also reads a LEDGERCHAT_* environment variable (see ``python main.py --help``).

Wiring, in order: settings (``engine.config``) → store (``ledger.store``, or ``ledger.pg_store`` with
``--database-url``) → engine (``engine.engine``) → pages
(``ui.pages``), all behind the front door (``ui.guard``: Host, Origin, token, security headers). The store is
opened (and its folder locked) before the server starts: a second process on the same ``--data-dir`` exits with
one line naming the first. The engine starts with the app (before the first page is served): attempts a dead
process left streaming are finalized; litellm's import (seconds) and the tool servers start in the background while
pages are served already, and a turn waits for both before its own timeouts start. On PostgreSQL several instances
may run at once (``engine.cluster``): only attempts whose instance is gone are finalized, by a survivor. Shutdown
cancels every stream with source ``shutdown`` before NiceGUI cancels background tasks, then flushes and closes the
store.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import time
from typing import TYPE_CHECKING, Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from engine.config import AppConfig, ConfigError, load_config  # noqa: E402
from engine.provider import ProviderConfig  # noqa: E402
from engine.tool_config import ServerConfig, ToolConfigError, load_tool_config  # noqa: E402

if TYPE_CHECKING:
    from engine.cluster import Cluster
    from engine.engine import Engine
    from ledger.store_api import EventStore

log = logging.getLogger("ledger_chat")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


READY_LINE = "Ledger Chat: the model client is loaded"


def main(argv: list[str] | None = None) -> int:
    simulated = os.environ.get("NICEGUI_USER_SIMULATION") == "true"
    args = [] if simulated else (sys.argv[1:] if argv is None else argv)
    try:
        config = load_config(args, os.environ)
        if config.command == "export":
            return export(config)
        if config.command == "migrate":
            return migrate(config)
        if not config.is_demo and not simulated:
            check_model(config)
        tool_servers(config)  # a broken tools file stops start-up with one line
    except (ConfigError, ToolConfigError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 2
    return run(config)


def run(config: AppConfig) -> int:
    from nicegui import ui

    from engine.redaction import RedactingFormatter
    from ledger.errors import DatabaseUnavailableError, DataDirInUseError
    from ui.access import new_token

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(RedactingFormatter(LOG_FORMAT))  # no credential from --api-base or an error in a log
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        store = open_store(config)
    except (DataDirInUseError, DatabaseUnavailableError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    token = (config.token or new_token()) if config.needs_token else None
    wire(config, store, token)
    where = f"http://{config.url_host}:{config.port}"
    if token and not config.token:
        where += f" — open {config.local_url}/?token={token}"
    elif token:
        where += " (access token required)"
    print(f"Ledger Chat on {where} — model: {config.model} — data: {store.where}", flush=True)
    ui.run(
        host=config.host,
        port=config.port,
        title="Ledger Chat",
        favicon="📒",
        reload=False,
        show=config.show,
        reconnect_timeout=3.0,
        show_welcome_message=False,
        dark=None,  # follow the system until the reader picks a theme (remembered in the browser)
        language="en-US",
        tailwind=False,  # no in-browser compiler: ui/static/utilities.css holds the CSS it made (ui.style)
    )
    return 0


def open_store(config: AppConfig, *, read_only: bool = False) -> EventStore:
    """PostgreSQL with ``--database-url``, else the TinyDB files of ``--data-dir``."""
    if config.database_url:
        from ledger.pg_store import PgStore

        return PgStore.open(config.database_url, read_only=read_only)
    from ledger.store import Store

    return Store.open(config.data_dir, read_only=read_only)


def wire(config: AppConfig, store: EventStore, token: str | None = None) -> None:
    """Front door → settings → engine → pages, inside NiceGUI's life cycle, over an open store."""
    from nicegui import app, background_tasks

    from engine.engine import Engine
    from engine.offline import rehearse, start_import
    from engine.settings import EngineSettings
    from engine.tokens import warm_up
    from engine.tools import ToolHub
    from ui.access import AccessPolicy
    from ui.context import PageContext
    from ui.guard import Guard
    from ui.pages import register_pages

    policy = AccessPolicy.for_bind(config.host, config.port, token=token, allowed_hosts=config.allowed_hosts)
    app.add_middleware(Guard, policy=policy)
    provider = provider_config(config, token=token)
    servers = tool_servers(config)
    hub = ToolHub(servers, log_dir=config.data_dir / "logs") if servers else None
    context = PageContext(model_label="demo model (offline)" if config.is_demo else config.model, demo=config.is_demo)
    if config.is_demo or "demo" in config.models:
        from demo.endpoint import DemoModel

        app.mount("/demo", DemoModel(chunk_delay=config.demo_chunk_delay, transient_faults=True).app)

    async def startup() -> None:
        # on a thread, pages are served meanwhile; then everything alive so far (litellm's modules, the store's
        # index) is moved out of the garbage collector's way: a full collection no longer walks it (gc.freeze)
        def loaded() -> None:
            warm_up(provider.model)
            rehearse(provider.model)  # what litellm builds on a first request is frozen with the rest
            gc.freeze()
            print(READY_LINE, flush=True)

        start_import(then=loaded)
        settings = EngineSettings(
            provider=provider,
            limits=config.limits,
            spawn=lambda coro, name: background_tasks.create(coro, name=name),
            others=tuple(provider_config(config, model, token) for model in config.models),
        )
        engine = Engine(store, settings, hub)
        if cluster_url is None:
            recovered = engine.recover()
        else:
            recovered = await start_cluster(engine, store, cluster_url)
        if recovered:
            log.warning("finalized %d answer(s) interrupted by the last shutdown", len(recovered))
        context.engine = engine
        gc.collect()
        gc.freeze()  # what start-up made (the index, the engine) lives on: full collections never walk it again
        if hub is not None:  # the tools panel shows "starting" meanwhile; a turn waits for them to settle
            background_tasks.create(hub.start(), name="tool servers")

    async def shutdown() -> None:
        if context.engine is not None:
            await context.engine.shutdown()
        if clusters:
            await clusters.pop().close()
        await asyncio.to_thread(store.close)
        if hub is not None:
            await hub.stop()

    cluster_url = config.database_url
    clusters: list[Cluster] = []

    async def start_cluster(engine: Engine, pg: EventStore, url: str) -> list[str]:
        """Several instances may share the database: follow them, own attempts, finalize dead owners' ones."""
        from engine.cluster import Cluster
        from ledger.pg_store import PgStore

        assert isinstance(pg, PgStore)
        clusters.append(Cluster(engine, pg, url))
        return await clusters[-1].start()

    app.on_startup(startup)
    app.on_shutdown(shutdown)  # registered before NiceGUI's own teardown, which cancels background tasks
    register_pages(context)
    probes(app)


def probes(app: Any) -> None:
    """Opt-in measurement for ``bench/stream_bench.py``: ``LC_LOOP_LAG_FILE`` samples the event loop every 5 ms
    and appends ``wall_time lag_ms cpu_ms`` for each wake-up over 2 ms late (cpu: what the loop's thread ran
    meanwhile, so a block is told from a machine too busy to run the process); ``LC_PROFILE_FILE`` profiles the loop's
    thread (cProfile) from start-up to shutdown and writes the stats there."""
    from nicegui import background_tasks

    lag_file, profile_file = os.environ.get("LC_LOOP_LAG_FILE"), os.environ.get("LC_PROFILE_FILE")
    if lag_file:

        async def sample() -> None:
            loop = asyncio.get_running_loop()
            with open(lag_file, "a", buffering=1) as out:
                while True:
                    started, cpu = loop.time(), time.thread_time()
                    await asyncio.sleep(0.005)
                    late = (loop.time() - started - 0.005) * 1000
                    if late > 2:  # and how much of it the loop's thread ran (not waiting for a busy machine)
                        out.write(f"{time.time():.3f} {late:.1f} {(time.thread_time() - cpu) * 1000:.1f}\n")

        app.on_startup(lambda: background_tasks.create(sample(), name="loop lag sampler"))
    if gc_file := os.environ.get("LC_GC_FILE"):
        gc_probe(gc_file)
    if profile_file:
        import cProfile

        profile = cProfile.Profile(time.thread_time)  # CPU time: a busy machine does not count

        def dump() -> None:
            profile.disable()
            profile.dump_stats(profile_file)

        app.on_startup(profile.enable)
        app.on_shutdown(dump)


def gc_probe(path: str) -> None:
    """Opt-in (``LC_GC_FILE``): append ``wall_time generation cpu_ms objects_in_gen2`` for every collection of the
    garbage collector over 1 ms of its thread's CPU, whatever thread ran it (``objects_in_gen2``: what a full one
    left tracked, counted after it; -1 after a young one)."""
    out = open(path, "a", buffering=1)  # noqa: SIM115 - open for the life of the process
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.thread_time()
            return
        ms = (time.thread_time() - started[0]) * 1000
        if ms > 1:
            gen = info["generation"]
            old = len(gc.get_objects(2)) if gen == 2 else -1
            out.write(f"{time.time():.3f} {gen} {ms:.1f} {old}\n")

    gc.callbacks.append(timed)


def provider_config(config: AppConfig, model: str | None = None, token: str | None = None) -> ProviderConfig:
    """How to call ``model`` (default: ``--model``); 'demo' is the built-in demo endpoint on this server, reached
    through the front door with the access token as its key."""
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
    root = os.path.dirname(os.path.abspath(__file__))
    return (ServerConfig(name="demo", command=sys.executable, args=("-m", "demo.tools_server"), cwd=root),)


def export(config: AppConfig) -> int:
    from ledger.codec import to_jsonl
    from ledger.errors import DatabaseUnavailableError

    if not config.database_url and not config.data_dir.is_dir():
        print(f"ledger-chat: no data folder at {config.data_dir} (--data-dir)", file=sys.stderr)
        return 1
    try:
        store = open_store(config, read_only=True)
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    for problem in store.problems:
        print(f"ledger-chat: {problem}", file=sys.stderr)
    if config.conversation:
        if config.conversation not in store.conversation_ids():
            print(f"ledger-chat: no conversation {config.conversation} in {store.where}", file=sys.stderr)
            return 1
        events = list(store.events(config.conversation))
    else:
        events = store.all_events()
    out = sys.stdout.buffer
    for line in to_jsonl(events):
        out.write(line.encode("utf-8"))
    out.flush()
    return 0


def migrate(config: AppConfig) -> int:
    """Copy a TinyDB data folder into PostgreSQL, then check counts and replay; 1 on any conflict or mismatch."""
    from ledger.copying import copy_folder
    from ledger.errors import DatabaseUnavailableError
    from ledger.pg_schema import redact_dsn

    source, url = config.from_data_dir, config.database_url
    assert source is not None and url is not None, "checked by load_config"
    if not source.is_dir():
        print(f"ledger-chat: no data folder at {source} (--from-data-dir)", file=sys.stderr)
        return 1
    try:
        report = copy_folder(source, url)
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    for line in (*report.problems, *report.conflicts):
        print(f"ledger-chat: {line}", file=sys.stderr)
    print(
        f"{source} → {redact_dsn(url)}: {report.copied} copied, {report.extended} completed, "
        f"{report.already} already there, {report.tombstones} deletion(s) carried over, {report.events} events "
        f"written; counts {'equal' if report.counts_equal else 'DIFFER'}, "
        f"replay {'equal' if report.replay_equal else 'DIFFERS'}",
        flush=True,
    )
    return 0 if report.ok else 1


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


if __name__ in {"__main__", "__mp_main__"}:
    code = main()
    if code:
        sys.exit(code)
