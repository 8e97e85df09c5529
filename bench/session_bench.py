"""What team mode's session check costs the front door, per HTTP request and per socket event, against personal
mode in the same run (not a test).

    .venv/bin/python -m bench.session_bench

The real front door (``ui.guard.Guard``) in front of an app that answers at once, driven in-process (no network:
the check itself is what is timed): ``REQUESTS`` page loads with a valid session cookie (``--accounts local``,
accounts in a real ``accounts.json``) and the same number in personal mode. Then the per-event check a socket
event goes through in team mode (``ui.sessions.acting_for`` and setting who acts), against handing the event on
directly. Sessions are answered from the cache (``engine.people``), as for every request but the first of a
session each second; the store read that refreshes it runs off the event loop and is not timed here.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import result
from engine.people import People, acting_as
from store.accounts import FileAccounts
from ui.access import AccessPolicy
from ui.guard import Guard
from ui.sessions import SessionSweep, acting_for
from ui.signin import COOKIE, TeamDoor

REQUESTS = 20_000
EVENTS = 100_000
NAME = "bench.session_bench"


async def answer(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def timed_requests(guard: Guard, cookie: str | None) -> list[float]:
    headers = [(b"host", b"127.0.0.1:8080"), (b"accept", b"text/html")]
    if cookie:
        headers.append((b"cookie", f"{COOKIE}={cookie}".encode()))
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/",
        "headers": headers,
        "client": ("127.0.0.1", 5),
        "query_string": b"",
    }
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    times = []
    for _ in range(REQUESTS):
        started = time.perf_counter()
        await guard(dict(scope), receive, send)
        times.append(time.perf_counter() - started)
    assert set(statuses) == {200}, f"every request let in: {set(statuses)}"
    return times


def timed_events(check: bool) -> list[float]:
    client = type("Client", (), {"id": "c1"})()
    handled = []
    times = []
    for _ in range(EVENTS):
        started = time.perf_counter()
        if check:
            person = acting_for(client)
            with acting_as(person):
                handled.append(1)
        else:
            handled.append(1)
        times.append(time.perf_counter() - started)
    return times


def quantiles(times: list[float]) -> tuple[float, float]:
    cut = statistics.quantiles(times, n=100)
    return cut[49] * 1e6, cut[94] * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        people = People(FileAccounts(Path(folder) / "accounts.json"))
        people.add("ann", "correct horse battery staple")
        cookie = people.sign_in("ann", "correct horse battery staple").cookie
        policy = AccessPolicy.for_bind("127.0.0.1", 8080, token=None)
        personal, team = Guard(answer, policy), Guard(answer, policy, door=TeamDoor(people))
        for _ in range(2):  # warm both, then measure each
            asyncio.run(timed_requests(personal, None))
            asyncio.run(timed_requests(team, cookie))
        base, checked = asyncio.run(timed_requests(personal, None)), asyncio.run(timed_requests(team, cookie))
        SessionSweep(people, context=None)  # type: ignore[arg-type,unused-ignore]  # team mode's event check switched on
        import ui.sessions

        ui.sessions._PAGES["c1"] = cookie  # noqa: SLF001 - the page the event's client is, opened with the session
        plain, gated = timed_events(False), timed_events(True)
    for what, (base_p, base_q), (p50, p95) in (
        ("HTTP request through the front door", quantiles(base), quantiles(checked)),
        ("socket event's check", quantiles(plain), quantiles(gated)),
    ):
        line = (
            f"{what}: team mode p50 {p50:.1f} µs, p95 {p95:.1f} µs; personal p50 {base_p:.1f} µs, p95 {base_q:.1f} µs"
        )
        print(line)
        result.row(
            NAME,
            f"{what} (session from the cache), p50 / p95",
            f"{p50:.1f} / {p95:.1f} µs",
            f"personal mode, same run: {base_p:.1f} / {base_q:.1f} µs (+{p50 - base_p:.1f} µs at p50)",
        )
    result.save()


if __name__ == "__main__":
    main()
