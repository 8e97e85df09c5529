"""``main.py acp``: Ledger Chat as an Agent Client Protocol agent on stdin/stdout, for an editor (``editor``).

Guarantees:
- stdout carries the protocol alone: before anything else runs, the process's file descriptor 1 is copied for the
  protocol and then pointed at stderr, and ``sys.stdout`` is stderr, so a ``print``, litellm, a child process or C
  code writing to stdout writes to stderr instead. NiceGUI is never imported on this path.
- Log lines go to stderr and to ``<data-dir>/logs/acp.log`` (credentials redacted, as the app's).
- The engine is the app's (``app.parts``: the same data folder or database, models, tool servers, presets, approval
  policy, limits), built headless: the demo model (the default, offline) is served on a loopback port of its own.
  It has a tool hub (an empty one without tool servers), which the editor's sessions add their own to, except
  with ``--no-tools``: then no tool server runs, the app's nor the editor's.
- A TinyDB folder belongs to one process: when the app (or another bridge) holds it, this says so in one line on
  stderr and exits with code 2, touching nothing. On PostgreSQL (``--database-url``) it runs beside any number of
  app instances, as one more instance (``app.cluster``): the browser sees its sessions live and a Stop there ends
  the editor's prompt. Team mode has no place here (an editor signs nobody in): ``--accounts`` other than
  ``personal`` is refused the same way.
- When the editor closes stdin (or SIGTERM arrives), every running turn is cancelled through the one cancel path
  (source ``acp``), the tool servers the editor brought are stopped, the engine shuts down, everything is flushed,
  and the process exits with code 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from app.config import AppConfig, ConfigError
from app.parts import close_parts, engine_settings, open_parts
from app.providers import check_model, tool_servers
from app.stores import open_store
from engine.tools import ToolConfigError, ToolHub

log = logging.getLogger("ledger_chat")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def acp(config: AppConfig) -> int:
    """Serve one editor on stdin/stdout until it goes; the exit code."""
    out_fd = protocol_stdout()
    if config.team:
        print("ledger-chat: acp runs in personal mode (an editor signs nobody in): drop --accounts", file=sys.stderr)
        return 2
    try:
        if not config.is_demo:
            check_model(config)
        tool_servers(config)
    except (ConfigError, ToolConfigError) as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 2
    from ledger.errors import DatabaseUnavailableError, DataDirInUseError

    try:
        store = open_store(config)
    except DataDirInUseError as exc:
        print(f"ledger-chat: acp: {exc} (with PostgreSQL, --database-url, both can run)", file=sys.stderr)
        return 2
    except DatabaseUnavailableError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 1
    logs(config)
    return asyncio.run(_serve(config, store, out_fd))


def protocol_stdout() -> int:
    """A copy of stdout for the protocol; stdout itself (fd 1 and ``sys.stdout``) now goes to stderr."""
    sys.stdout.flush()
    out_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out_fd


def logs(config: AppConfig) -> None:
    from engine.redaction import RedactingFormatter

    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    with contextlib.suppress(OSError):  # a database-only set-up may have no writable data folder
        (config.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(config.data_dir / "logs" / "acp.log", encoding="utf-8"))
    for handler in handlers:
        handler.setFormatter(RedactingFormatter(LOG_FORMAT))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True)
    for noisy in ("LiteLLM", "litellm", "httpx", "uvicorn", "mcp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def _serve(config: AppConfig, store: Any, out_fd: int) -> int:
    from editor import protocol_streams, serve
    from engine.attempts import ALONE
    from engine.commands import build_engine
    from engine.files import models, retouch
    from engine.offline import start_import

    stop_demo: Callable[[], None] | None = None
    if config.is_demo or "demo" in config.models:  # the demo model at <local_url>/demo/v1, as the app mounts it
        port, stop_demo = serve_demo(config)
        config = dataclasses.replace(config, host="127.0.0.1", port=port)
    loop, kept = asyncio.get_running_loop(), set()

    def spawn(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = loop.create_task(coro, name=name)
        kept.add(task)
        task.add_done_callback(kept.discard)
        return task

    opened = open_parts(config, store)
    if opened.hub is None and not config.no_tools:  # an editor's session may bring its own (editor.servers)
        hub = ToolHub((), log_dir=config.data_dir / "logs", blobs=opened.files.blobs)
        hub.retouch = retouch  # a tool's images are kept re-encoded without metadata, as attachments are
        opened = dataclasses.replace(opened, hub=hub)
    start_import(then=models.register)
    cluster = None
    if config.database_url is not None:  # one more instance on the database: followed, owning its own attempts
        from app.cluster import Cluster

        cluster = Cluster(store, config.database_url)
    engine = build_engine(store, engine_settings(config, opened, spawn), opened.hub, peers=cluster or ALONE)
    from app.telemetry import start_telemetry

    start_telemetry(config.telemetry, engine)
    recovered = await cluster.start(engine) if cluster is not None else engine.recover()
    if recovered:
        log.warning("finalized %d answer(s) interrupted by the last shutdown", len(recovered))
    if opened.hub is not None:
        spawn(opened.hub.start(), "tool servers")
    try:
        serving = loop.create_task(serve(engine, *await protocol_streams(out_fd)), name="acp")
        loop.add_signal_handler(signal.SIGTERM, serving.cancel)
        log.info("Ledger Chat serves an editor over ACP on stdio — model: %s — data: %s", config.model, store.where)
        with contextlib.suppress(asyncio.CancelledError):
            await serving
    finally:
        await engine.shutdown()
        if cluster is not None:
            await cluster.close()
        await asyncio.to_thread(store.close)
        await close_parts(opened)
        if stop_demo is not None:
            stop_demo()
    return 0


def serve_demo(config: AppConfig) -> tuple[int, Callable[[], None]]:
    """The demo model under ``/demo`` on a free loopback port, on a thread of its own; (port, stop)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from demo.server import DemoModel

    model = DemoModel(chunk_delay=config.demo_chunk_delay, transient_faults=True)
    app = Starlette(routes=[Mount("/demo", app=model.app)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off", log_config=None))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True, name="demo")
    thread.start()

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()

    return int(sock.getsockname()[1]), stop
