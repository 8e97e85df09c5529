"""Blob stores by content: the same contract for memory, files under the data dir and the PostgreSQL table; a
damaged or foreign file never crashes a read; two PostgreSQL stores on one database see the same blobs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.blobs import BlobStore, MemoryBlobs, keep_text, read_text, sha256_of
from store.blobs.folder import FolderBlobs


@pytest.fixture(params=["memory", "folder", "postgres"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlobStore]:
    if request.param == "memory":
        yield MemoryBlobs()
    elif request.param == "folder":
        yield FolderBlobs(tmp_path / "blobs")
    else:
        from store.blobs.postgres import PgBlobs

        store = PgBlobs.open(request.getfixturevalue("database_url"), instance="test")
        yield store
        store.close()


def test_a_blob_is_stored_once_under_the_hash_of_its_bytes_and_read_back_exactly(blobs: BlobStore) -> None:
    data = bytes(range(256)) * 40
    sha = blobs.put(data, "application/octet-stream")
    assert sha == sha256_of(data) and blobs.put(data) == sha
    assert blobs.get(sha) == data and blobs.has(sha)
    assert blobs.get("0" * 64) is None and not blobs.has("0" * 64)
    assert blobs.get("../../etc/passwd") is None


def test_a_text_over_the_bound_is_kept_as_a_blob_and_read_back_exactly(blobs: BlobStore) -> None:
    text = "".join(f"{n:07d} long ✓ \ud800 text\n" for n in range(70_000))  # a lone surrogate, kept as it was
    shown, whole = keep_text(blobs, text)
    assert whole is not None and text.startswith(shown) and len(shown.encode("utf-8", "surrogatepass")) <= 65536
    assert read_text(blobs, whole) == text and whole.chars == len(text)
    assert keep_text(blobs, "short") == ("short", None)


def test_deleting_removes_only_the_blobs_named_and_counts_them(blobs: BlobStore) -> None:
    keep, drop = blobs.put(b"keep me"), blobs.put(b"drop me")
    assert blobs.delete([drop, drop, "f" * 64]) == 1
    assert blobs.get(drop) is None and blobs.get(keep) == b"keep me"


def test_a_damaged_or_foreign_blob_file_reads_as_missing_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = FolderBlobs(tmp_path / "blobs")
    sha = folder.put(b"the real bytes")
    path = tmp_path / "blobs" / sha[:2] / sha
    assert path.read_bytes() == b"the real bytes"
    path.write_bytes(b"changed by hand")
    (tmp_path / "blobs" / "not-a-blob").write_bytes(b"x")
    (tmp_path / "blobs" / sha[:2] / f".tmp-{sha}-1").write_bytes(b"half")
    with caplog.at_level(logging.WARNING, "ledger_chat.blobs"):
        assert folder.get(sha) is None
    assert "do not match its name" in caplog.text
    assert list(folder.hashes()) == [sha]
    assert folder.put(b"the real bytes") == sha and folder.get(sha) == b"the real bytes"  # put repairs it


def test_a_read_only_folder_writes_nothing(tmp_path: Path) -> None:
    reader = FolderBlobs(tmp_path / "blobs", read_only=True)
    with pytest.raises(PermissionError):
        reader.put(b"x")
    assert not (tmp_path / "blobs").exists() and reader.get(sha256_of(b"x")) is None


def test_two_postgres_blob_stores_on_one_database_see_the_same_blobs(database_url: str) -> None:
    from store.blobs.postgres import PgBlobs

    a, b = PgBlobs.open(database_url, instance="a"), PgBlobs.open(database_url, instance="b")
    try:
        sha = a.put(b"seen by both", "text/plain")
        assert b.has(sha) and b.get(sha) == b"seen by both"
        assert b.put(b"seen by both") == sha  # the same bytes from the other instance: one row
        assert b.delete([sha]) == 1 and a.get(sha) is None
    finally:
        a.close()
        b.close()


def test_a_blob_folder_inside_the_data_dir_is_no_damage_to_the_tinydb_store(tmp_path: Path) -> None:
    from store.tinydb.store import Store

    FolderBlobs(tmp_path / "data" / "blobs").put(b"some bytes")
    store = Store.open(tmp_path / "data")
    try:
        assert store.problems == [] and store.conversation_ids() == []
    finally:
        store.close()
    assert (tmp_path / "data" / "blobs").is_dir()
