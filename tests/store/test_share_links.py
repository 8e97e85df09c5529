"""Share links' lookup: the same contract for memory, the JSON file beside the TinyDB ledger and the PostgreSQL
table; a second opening (another instance on the same database) finds a link at once and misses it from the request
after its revoke; only the token's hash is stored; a damaged file reads as no links (every link "not found")."""

from __future__ import annotations

import logging
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store.shares import FileShares, MemoryShares, ShareLink, ShareStore, token_hash

Opener = Callable[[], ShareStore]
TS = "2026-12-04T10:00:00.000+00:00"


@pytest.fixture(params=["memory", "file", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the back end again on the same place each time it is called (memory: the one store)."""
    if request.param == "memory":
        one = MemoryShares()
        yield lambda: one
    elif request.param == "file":
        yield lambda: FileShares(tmp_path / "share_links.json")
    else:
        from store.shares import PgShares

        url = request.getfixturevalue("database_url")
        opened: list[PgShares] = []

        def open_pg() -> ShareStore:
            opened.append(PgShares.open(url, instance=f"test-{len(opened)}"))
            return opened[-1]

        yield open_pg
        for store in opened:
            store.close()


def test_a_link_is_found_by_its_tokens_hash_on_every_opening_and_not_after_its_revoke(opener: Opener) -> None:
    first, second = opener(), opener()
    token = secrets.token_urlsafe(16)
    link = ShareLink(token_hash(token), f"share_{secrets.token_hex(4)}", "conv_1", "local:ann", TS)
    first.add(link)
    assert second.find(token_hash(token)) == link
    assert second.find(token_hash(token + "x")) is None
    assert link in second.links()
    assert second.remove(link.share_id) and not second.remove(link.share_id)
    assert first.find(token_hash(token)) is None, "revoked on one instance: gone on the other at its next request"


def test_the_file_holds_only_hashes_readable_by_its_owner_alone(tmp_path: Path) -> None:
    token = secrets.token_urlsafe(16)
    store = FileShares(tmp_path / "share_links.json")
    store.add(ShareLink(token_hash(token), "share_1", "conv_1", None, TS))
    text = (tmp_path / "share_links.json").read_text()
    assert token not in text and token_hash(token) in text
    assert stat.S_IMODE((tmp_path / "share_links.json").stat().st_mode) == 0o600


def test_a_damaged_file_reads_as_no_links_and_is_replaced_whole(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "share_links.json"
    path.write_text("{not json")
    store = FileShares(path)
    with caplog.at_level(logging.WARNING):
        assert store.find("0" * 64) is None and store.links() == []
    assert "not a share links file" in caplog.text
    store.add(ShareLink("1" * 64, "share_1", "conv_1", None, TS))
    assert [link.share_id for link in FileShares(path).links()] == ["share_1"]
