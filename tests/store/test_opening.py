"""Opening a data folder never fails: every damaged shape is kept aside, reported, and the rest loads intact."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger.events.core import Deleted, Renamed
from store.tinydb.store import Store
from tests.support.folders import read_only_folder
from tests.support.ledger_builders import conversation_events

Damage = Callable[[Path], object]


def healthy_folder(folder: Path) -> list:
    store = Store.open(folder)
    kept = [store.append(e) for e in conversation_events("keep", answers=1, chunks=5)]
    [store.append(e) for e in conversation_events("hurt", answers=1, chunks=5)]
    assert store.close() == 0
    return kept


def opened(store: Store) -> Store:
    """The store with every conversation read (a conversation's file is read, and its damage found, when opened)."""
    for cid in store.conversation_ids():
        store.events(cid)
    return store


def index_entry_without_id(folder: Path) -> None:
    data = json.loads((folder / "index.json").read_text())
    data["conversations"]["99"] = {"file": "conv-ghost.json", "deleted": True}
    (folder / "index.json").write_text(json.dumps(data))


def write(name: str, content: bytes) -> Damage:
    return lambda folder: (folder / name).write_bytes(content)


def directory_named_like_a_file(folder: Path) -> None:
    (folder / "conv-hurt.json").unlink()
    (folder / "conv-hurt.json").mkdir()


def dangling_symlink(folder: Path) -> None:
    (folder / "conv-hurt.json").unlink()
    (folder / "conv-hurt.json").symlink_to(folder / "nowhere.json")


def records_the_codec_rejects(folder: Path) -> None:
    path = folder / "conv-hurt.json"
    data = json.loads(path.read_text())
    data["events"]["1"]["kind"] = "no_such_kind"
    data["events"]["2"]["turn"] = "not a number"
    path.write_text(json.dumps(data))


DEEP = b'{"events": {"1": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
SHAPES: dict[str, tuple[Damage, str, str]] = {
    # name: (damage, what the report names, the path kept aside ("" when nothing needs keeping aside))
    "an index entry without an id": (index_entry_without_id, "without a valid id", "index.json"),
    "an index whose table is a list": (write("index.json", b'{"conversations": []}'), "index", "index.json"),
    "an index that is a list": (write("index.json", b"[1, 2, 3]"), "index", "index.json"),
    "a non-UTF-8 index": (write("index.json", b"\xff\xfe{\x00"), "index", "index.json"),
    "a folder named like a conversation file": (directory_named_like_a_file, "cannot be read", "conv-hurt.json"),
    "a dangling symlink": (dangling_symlink, "cannot be read", "conv-hurt.json"),
    "deeply nested JSON": (write("conv-hurt.json", DEEP), "nested too deeply", "conv-hurt.json"),
    "deeply nested index": (write("index.json", DEEP.replace(b"events", b"conversations")), "index", "index.json"),
    "non-UTF-8 bytes": (
        write("conv-hurt.json", b'{"events": {"1": {"kind": "\xff\xfe"}}}'),
        "damaged",
        "conv-hurt.json",
    ),
    "records the codec rejects": (records_the_codec_rejects, "could not be read", "conv-hurt.json"),
    "a file name that is not an id": (write('conv-x" onmouseover="alert(1).json', b"{}"), "not named like", "conv-x"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_damaged_shape_opens_is_kept_aside_and_is_reported(tmp_path: Path, shape: str) -> None:
    damage, named, kept_aside = SHAPES[shape]
    kept = healthy_folder(tmp_path)
    damage(tmp_path)

    store = opened(Store.open(tmp_path))
    assert list(store.events("keep")) == kept
    assert any(named in p for p in store.problems), store.problems
    if kept_aside:
        assert list(tmp_path.glob(f"{kept_aside}*.corrupt-*")), f"{kept_aside} was not kept aside"
        assert any("kept at" in p for p in store.problems), store.problems
    assert all(cid.replace("_", "").replace("-", "").isalnum() for cid in store.conversation_ids())
    assert store.health().ok, "damage found when opening does not stop saving"
    store.append(Renamed(conversation_id="keep", ts="", title="still writable"))
    assert store.close() == 0

    reopened = opened(Store.open(tmp_path))
    assert [e.KIND for e in reopened.events("keep")][-1] == "renamed"
    assert not [p for p in reopened.problems if named in p], "what was kept aside is not reported again"
    reopened.close()


def test_a_conversation_whose_records_the_codec_rejects_keeps_every_readable_event(tmp_path: Path) -> None:
    healthy_folder(tmp_path)
    records_the_codec_rejects(tmp_path)
    store = Store.open(tmp_path)
    hurt = store.events("hurt")
    assert [e.seq for e in hurt] == list(range(3, 3 + len(hurt)))
    (report,) = [p for p in store.problems if "hurt" in p]
    assert "2 stored record(s) could not be read" in report and "no_such_kind" in report
    store.close()


def truncate(folder: Path) -> None:
    path = folder / "conv-hurt.json"
    path.write_bytes(path.read_bytes()[:-30])


def test_a_damaged_file_in_a_read_only_folder_opens_and_is_reported_without_changing_anything(tmp_path: Path) -> None:
    def prepare(folder: Path) -> list:
        kept = healthy_folder(folder)
        truncate(folder)
        return kept

    with read_only_folder(tmp_path / "ro", prepare) as (folder, kept):
        before = sorted(os.listdir(folder))
        store = opened(Store.open(folder))
        assert list(store.events("keep")) == kept
        assert any("hurt" in p and "damaged" in p for p in store.problems), store.problems
        health = store.health()
        assert health.saving_fails is not None and "read-only" in health.saving_fails
        assert sorted(os.listdir(folder)) == before
        store.close()


def test_an_index_entry_without_an_id_does_not_hide_the_tombstones_of_others(tmp_path: Path) -> None:
    store = Store.open(tmp_path)
    [store.append(e) for e in conversation_events("gone", answers=1, chunks=2)]
    store.append(Deleted(conversation_id="gone", ts=""))
    store.close()
    index_entry_without_id(tmp_path)
    reopened = Store.open(tmp_path)
    assert reopened.is_deleted("gone") and "gone" not in reopened.conversation_ids()
    reopened.close()
