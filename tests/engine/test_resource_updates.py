"""``notifications/resources/updated`` from a real SDK server over stdio (``tests.support.context_server``): an
attached resource is watched (``resources/subscribe`` before 2026-07-28, a ``subscriptions/listen`` stream on
2026-07-28), the server's ``visit`` tool changes it, and the hub marks ``(server, uri)`` changed; reading it again
clears the mark. A server that offers no subscriptions is asked nothing (its own record of requests shows it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from engine.tools import resources
from engine.tools.hub import ToolHub
from tests.support.tools import second_server_config
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio
COUNTER = "counter://second/visits"


async def started(tmp_path: Path, protocol: str, subscriptions: bool = True) -> ToolHub:
    env = {"LC_CONTEXT_RECORD": str(tmp_path / "requests.txt")}
    if not subscriptions:
        env["LC_CONTEXT_NO_SUBSCRIBE"] = "1"
    hub = ToolHub((second_server_config(protocol=protocol, env=env),), log_dir=tmp_path / "logs")
    await hub.start()
    assert hub.health()[0].state == "ready", hub.health()
    return hub


def requests(tmp_path: Path) -> list[str]:
    path = tmp_path / "requests.txt"
    return path.read_text().split() if path.exists() else []


@pytest_asyncio.fixture
async def hubs() -> AsyncIterator[list[ToolHub]]:
    made: list[ToolHub] = []
    yield made
    for hub in made:
        await hub.stop()


@pytest.mark.parametrize(
    ("protocol", "revision", "how", "method"),
    [
        ("auto", "2026-07-28", "listen", "subscriptions/listen"),
        ("2025-11-25", "2025-11-25", "subscribe", "resources/subscribe"),
    ],
)
async def test_an_attached_resource_the_server_changes_is_marked_changed_until_it_is_read_again(
    tmp_path: Path, hubs: list[ToolHub], protocol: str, revision: str, how: str, method: str
) -> None:
    hub = await started(tmp_path, protocol)
    hubs.append(hub)
    assert hub.session("second").protocol_version == revision
    heard: list[tuple[str, str, bool]] = []
    hub.watch.listen(lambda server, uri, changed: heard.append((server, uri, changed)), lambda: True)

    first = await resources.read(hub, "second", COUNTER)  # what an "@" attach reads
    await wait_until(lambda: hub.watch.how.get("second") == how, what=f"the server asked by {method}")
    assert method in requests(tmp_path)
    assert not hub.watch.changed("second", COUNTER)

    await hub.call("second", "visit", {}, None)
    await wait_until(lambda: hub.watch.changed("second", COUNTER), what="the resource marked changed")
    assert heard == [("second", COUNTER, True)]

    again = await resources.read(hub, "second", COUNTER)  # what a Refresh reads
    assert again[0].data != first[0].data
    assert not hub.watch.changed("second", COUNTER)
    assert heard == [("second", COUNTER, True), ("second", COUNTER, False)]


async def test_a_listen_stream_is_opened_again_holding_every_watched_uri(tmp_path: Path, hubs: list[ToolHub]) -> None:
    hub = await started(tmp_path, "auto")
    hubs.append(hub)
    await resources.read(hub, "second", "config://second/settings.json")
    await wait_until(lambda: hub.watch.how.get("second") == "listen", what="the first stream")
    await resources.read(hub, "second", COUNTER)
    await hub.watch.settled()
    assert hub.watch.watched("second") == {"config://second/settings.json", COUNTER}
    await wait_until(lambda: requests(tmp_path).count("subscriptions/listen") == 2, what="a second stream")
    await hub.call("second", "visit", {}, None)
    await wait_until(lambda: hub.watch.changed("second", COUNTER), what="the resource marked changed")
    assert not hub.watch.changed("second", "config://second/settings.json")


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
async def test_a_server_that_offers_no_subscriptions_is_asked_nothing_and_nothing_is_marked(
    tmp_path: Path, hubs: list[ToolHub], protocol: str
) -> None:
    hub = await started(tmp_path, protocol, subscriptions=False)
    hubs.append(hub)
    await resources.read(hub, "second", COUNTER)
    await hub.watch.settled()
    await hub.call("second", "visit", {}, None)
    await resources.read(hub, "second", "config://second/settings.json")  # a request after the visit's
    asked = requests(tmp_path)
    assert "resources/read" in asked and "tools/call" in asked, asked
    assert "resources/subscribe" not in asked and "subscriptions/listen" not in asked, asked
    assert hub.watch.how == {}
    assert not hub.watch.changed("second", COUNTER)
