"""The real app with three bench-only routes that drive its engine without a browser (for bench/many_streams_bench).

    python -m bench.many_streams_app --port P --data-dir D --model openai/test-model --api-base URL

Everything is ``main.py``'s app (same options, wiring, pages, engine, store); the routes only call the engine's
public methods, as a page does:
- ``POST /bench/create?n=N&tag=T``: N new conversations (``Engine.create_conversation``); returns their ids.
- ``POST /bench/send?tag=T``: each of them is sent ``stream {T}{i:03d}`` (``Engine.submit``, as the composer does).
- ``POST /bench/stop``: Stop in every conversation at once (``Engine.cancel(cid, "user")``, the Stop button's
  path); returns when every cancel returned.
- ``GET /bench/received?n=K``: for the first K conversations, when the engine recorded each word (its ``chunk``
  events' ``ts``, wall clock): with the upstream's stamps, how far behind the upstream the app itself runs.
- ``GET /bench/closed``: per conversation, the ledger's ``upstream_closed`` ``close_ms`` (cancel decided ->
  stream closed, as the engine measured it) and ``ts`` (when it was recorded, wall clock).
- ``POST /bench/cprofile``: the event loop's thread under cProfile (CPU time) from now; ``?dump=FILE``: until
  now, its stats written to FILE.
The many-streams bench copies this module into an older checkout it compares with, so both sides are driven by
the same routes.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

import ui.pages  # noqa: E402

CAPTURED: dict[str, Any] = {}
STARTED: list[str] = []
_register = ui.pages.register_pages


def _capture(context: Any) -> None:
    CAPTURED["context"] = context
    _register(context)


ui.pages.register_pages = _capture


def routes() -> None:
    from nicegui import app

    def engine() -> Any:
        return CAPTURED["context"].require_engine()

    @app.post("/bench/create")
    async def create(n: int, tag: str) -> dict[str, Any]:
        cids = [engine().create_conversation(f"bench {tag}{i:03d}") for i in range(n)]
        STARTED[:] = cids
        return {"cids": cids}

    @app.post("/bench/send")
    async def send(tag: str) -> dict[str, Any]:
        for i, cid in enumerate(STARTED):
            await engine().submit(cid, f"stream {tag}{i:03d}")
        return {"sent": len(STARTED)}

    @app.post("/bench/stop")
    async def stop() -> dict[str, Any]:
        began = time.monotonic()
        done = await asyncio.gather(*(engine().cancel(cid, "user") for cid in STARTED))
        return {"cancelled": sum(done), "began": began, "returned": time.monotonic()}

    @app.get("/bench/received")
    async def received(n: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for cid in STARTED[:n]:
            events = engine().store.events(cid)
            out[cid] = [[e.ts, e.text] for e in events if e.KIND == "chunk"]
        return out

    @app.post("/bench/cprofile")
    async def cprofile(dump: str = "") -> dict[str, Any]:
        import cProfile

        if dump:
            profile = CAPTURED.pop("cprofile")
            profile.disable()
            profile.dump_stats(dump)
        else:
            CAPTURED["cprofile"] = cProfile.Profile(time.thread_time)  # enabled in the loop's thread: it profiles it
            CAPTURED["cprofile"].enable()
        return {}

    @app.get("/bench/closed")
    async def closed() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for cid in STARTED:
            events = engine().store.events(cid)
            out[cid] = [[e.close_ms, e.ts] for e in events if e.KIND == "upstream_closed"]
        return out


if __name__ in {"__main__", "__mp_main__"}:
    from app.cli import main

    routes()
    sys.exit(main())
