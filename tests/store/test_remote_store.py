"""Remote tool servers and sealed tokens: the same contract for memory, the JSON files beside the TinyDB ledger and
the PostgreSQL tables; a reopened store (a restart) and a second store on the same database (another instance) see
the same; removing a server removes every sealed token of it; the token file is the owner's alone (0600)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from store.tokens import FileRemote, MemoryRemote, RemoteServer, RemoteStore, token_key

Opener = Callable[[], RemoteStore]


@pytest.fixture(params=["memory", "file", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    if request.param == "memory":
        one = MemoryRemote()
        yield lambda: one
    elif request.param == "file":
        yield lambda: FileRemote(tmp_path)
    else:
        from store.tokens import PgRemote

        url = request.getfixturevalue("database_url")
        opened: list[PgRemote] = []

        def open_pg() -> RemoteStore:
            opened.append(PgRemote.open(url, instance=f"test-{len(opened)}"))
            return opened[-1]

        yield open_pg
        for store in opened:
            store.close()


def test_servers_and_sealed_tokens_are_kept_replaced_and_removed_alike_everywhere(opener: Opener) -> None:
    first, second = opener(), opener()
    for server in first.servers():
        first.remove(server.owner, server.name)
    wiki = RemoteServer(owner=None, name="wiki", url="https://wiki.example/mcp", added_ts="2026-12-04T12:00:00.000Z")
    mine = RemoteServer(
        owner="local:ada", name="mine", url="http://127.0.0.1:9/mcp", added_ts="2026-12-04T12:01:00.000Z"
    )
    first.put(wiki)
    first.put(mine)
    assert sorted(second.servers(), key=lambda s: s.name) == [mine, wiki]
    second.put(wiki.with_tools('[{"name": "search"}]'))
    assert [s for s in first.servers() if s.name == "wiki"][0].tools == '[{"name": "search"}]'
    first.seal(token_key("local:ada", "wiki"), b"\x00sealed-1")
    first.seal(token_key("local:bo", "wiki"), b"sealed-2")
    second.seal(token_key("local:ada", "wiki"), b"sealed-3")
    assert first.sealed(token_key("local:ada", "wiki")) == b"sealed-3"
    assert second.forget(token_key("local:bo", "wiki")) and first.sealed(token_key("local:bo", "wiki")) is None
    assert first.remove(None, "wiki") and not second.remove(None, "wiki")
    assert second.sealed(token_key("local:ada", "wiki")) is None  # a removed server's tokens go with it
    assert opener().servers() == [mine]


def test_the_token_file_is_readable_by_its_owner_alone(tmp_path: Path) -> None:
    FileRemote(tmp_path).seal(token_key(None, "notes"), b"ciphertext")
    assert (tmp_path / "oauth_tokens.json").stat().st_mode & 0o777 == 0o600


def test_removing_a_personal_server_keeps_anothers_server_of_the_same_name(opener: Opener) -> None:
    store = opener()
    for server in store.servers():
        store.remove(server.owner, server.name)
    for person in ("local:ada", "local:bo"):
        store.put(RemoteServer(owner=person, name="mine", url="http://127.0.0.1:9/mcp", added_ts="t"))
        store.seal(token_key(person, "mine"), person.encode())
    assert store.remove("local:ada", "mine")
    assert store.sealed(token_key("local:ada", "mine")) is None
    assert store.sealed(token_key("local:bo", "mine")) == b"local:bo"
    assert [s.owner for s in store.servers()] == ["local:bo"]


def test_a_change_by_another_store_on_the_same_data_changes_the_stamp_and_who_changed_it_is_kept(
    opener: Opener,
) -> None:
    first, second = opener(), opener()
    before = second.stamp()
    added = RemoteServer(owner=None, name="docs", url="https://docs.example/mcp", added_ts="t0", added_by="local:ann")
    first.put(added)
    after_add = second.stamp()
    assert after_add != before
    switched = replace(added, enabled=False, changed_by="local:bo", changed_ts="t1")
    first.put(switched)
    assert second.stamp() != after_add
    assert [s for s in second.servers() if s.name == "docs"] == [switched]
    stamp = second.stamp()
    assert second.stamp() == stamp  # nothing changed: the copy read after it is current
    first.remove(None, "docs")
    assert second.stamp() != stamp
