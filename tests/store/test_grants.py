"""Server approval grants: the same contract for memory, the JSON file beside the TinyDB ledger and the PostgreSQL
table; a reopened store (a restart) and a second store on the same database (another instance) see the same grants;
a damaged file reads as no grants (the tool asks again) and is replaced whole on the next write."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from store.grants.api import Grant, GrantStore, MemoryGrants
from store.grants.file import FileGrants

H1, H2 = "1" * 64, "2" * 64
Opener = Callable[[], GrantStore]


@pytest.fixture(params=["memory", "file", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the back end again on the same place each time it is called (memory: the one store)."""
    if request.param == "memory":
        one = MemoryGrants()
        yield lambda: one
    elif request.param == "file":
        yield lambda: FileGrants(tmp_path / "approval_grants.json")
    else:
        from store.grants.postgres import PgGrants

        url = request.getfixturevalue("database_url")
        opened: list[PgGrants] = []

        def open_pg() -> GrantStore:
            opened.append(PgGrants.open(url, instance=f"test-{len(opened)}"))
            return opened[-1]

        yield open_pg
        for store in opened:
            store.close()


def test_a_grant_is_kept_replaced_and_revoked_and_every_opening_of_the_store_sees_the_same(opener: Opener) -> None:
    first, second = opener(), opener()  # a restart, or another instance on the same database
    for key in list(first.grants()):
        first.revoke(key)
    first.grant(Grant(key="demo/delete_note", grant_hash=H1, granted_ts="2026-12-02T04:00:00.000+00:00"))
    assert second.grants()["demo/delete_note"].grant_hash == H1
    second.grant(Grant(key="demo/delete_note", grant_hash=H2, granted_ts="2026-12-02T04:01:00.000+00:00"))
    assert list(first.grants().values()) == [Grant("demo/delete_note", H2, "2026-12-02T04:01:00.000+00:00")]
    assert first.revoke("demo/delete_note") and not second.revoke("demo/delete_note")
    assert opener().grants() == {}


def test_a_damaged_grants_file_reads_as_no_grants_and_the_next_write_replaces_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "approval_grants.json"
    path.write_text('[{"key": "demo/delete_note", "grant_ha')
    grants = FileGrants(path)
    with caplog.at_level(logging.WARNING, "ledger_chat.grants"):
        assert grants.grants() == {}
    assert "read as no grants" in caplog.text
    grants.grant(Grant(key="demo/x", grant_hash=H1, granted_ts="t"))
    assert FileGrants(path).grants() == {"demo/x": Grant("demo/x", H1, "t")}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["approval_grants.json"]  # no temporary file left
