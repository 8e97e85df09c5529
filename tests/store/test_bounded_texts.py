"""Texts over the bound (``ledger.bounds``) are blobs: a new tool result round-trips through the store as its
preview and a reference, and a conversation file written before the bound (or planted) is rewritten when read,
here or in another process, atomically, with the whole text downloadable byte for byte from the blob folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ledger.bounds import PREVIEW_BYTES, TEXT_BOUND, preview
from ledger.events.core import Created, Persisted, Submitted, ToolResult
from store.blobs import FolderBlobs, FolderBounding, keep_text, read_text
from store.tinydb import OVERSIZE_FILE
from store.tinydb import storage as tinydb_storage
from store.tinydb.store import Store
from tests.support.ledger_builders import T0, TEST_PACE, stamp, turn_events
from tests.support.stores import write_tinydb_folder


def long_text(size: int) -> str:
    """``size`` bytes of UTF-8 that differ along their length (a cut or a swap shows), some of them not ASCII."""
    line = "".join(f"line {n:08d} é ✓ {'x' * 40}\n" for n in range(1000))
    return (line * (size // len(line.encode()) + 1))[: size // 2] + "end ∎"


def test_a_tool_result_over_the_bound_round_trips_through_the_store_as_a_preview_and_a_blob(tmp_path: Path) -> None:
    blobs = FolderBlobs(tmp_path / "data" / "blobs")
    text = long_text(3 * TEXT_BOUND)
    shown, whole = keep_text(blobs, text)
    assert whole is not None and shown == preview(text) and len(shown.encode()) <= PREVIEW_BYTES
    assert whole.size == len(text.encode()) and whole.chars == len(text)
    store = Store.open(tmp_path / "data")
    for event in turn_events("c1", 1, ["hi"], at=T0, question="run it", pace=TEST_PACE):
        store.append(event)
    result = ToolResult(conversation_id="c1", ts=stamp(T0), attempt_id="a1", call_id="k1", status="ok",
                        content=shown, size=whole.chars, whole=whole)  # fmt: skip
    store.append(result)
    assert store.close() == 0
    again = Store.open(tmp_path / "data")
    try:
        (read,) = [e for e in again.events("c1") if isinstance(e, ToolResult)]
    finally:
        again.close()
    assert read.whole == whole and read.content == shown
    assert read_text(blobs, read.whole) == text
    assert os.path.getsize(tmp_path / "data" / "conv-c1.json") < 2 * PREVIEW_BYTES + 10_000


@pytest.mark.parametrize("size", [2 * TEXT_BOUND, OVERSIZE_FILE + TEXT_BOUND], ids=["here", "in_another_process"])
def test_a_planted_message_over_the_bound_is_moved_into_a_blob_when_its_conversation_is_read(
    tmp_path: Path, size: int
) -> None:
    folder = tmp_path / "data"
    text = long_text(2 * size)
    write_tinydb_folder(folder, {"big": [Created(conversation_id="big", ts=stamp(T0)), _submitted(text)]})
    store = Store.open(folder, bounding=FolderBounding(folder / "blobs"))
    try:
        (message,) = [e for e in store.events("big") if isinstance(e, Submitted)]
        problems = store.health().problems
    finally:
        store.close()
    assert message.whole is not None and message.text == preview(text)
    assert FolderBlobs(folder / "blobs").get(message.whole.sha256) == text.encode()
    assert os.path.getsize(folder / "conv-big.json") < 2 * PREVIEW_BYTES
    assert problems == ()  # moving a text into a blob is no problem: nothing was cut


def test_an_answer_over_the_bound_is_cut_with_the_original_file_kept_beside_it(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    text = long_text(2 * TEXT_BOUND + 100)
    answer = Persisted(conversation_id="big", ts=stamp(T0), message_id="m1", attempt_id="a1", status="complete",
                       text=text)  # fmt: skip
    write_tinydb_folder(folder, {"big": [Created(conversation_id="big", ts=stamp(T0)), answer]})
    store = Store.open(folder, bounding=FolderBounding(folder / "blobs"))
    try:
        (read,) = [e for e in store.events("big") if isinstance(e, Persisted)]
        problems = store.health().problems
    finally:
        store.close()
    assert read.text == preview(text)
    (kept,) = folder.glob("conv-big.json.whole-*")
    assert json.loads(kept.read_bytes())["events"]["2"]["text"] == text
    assert any("cut to their first part" in p.message for p in problems)


def test_a_rewrite_that_fails_at_its_rename_leaves_the_old_file_which_the_next_read_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "data"
    text = long_text(2 * TEXT_BOUND)
    write_tinydb_folder(folder, {"big": [Created(conversation_id="big", ts=stamp(T0)), _submitted(text)]})
    before = (folder / "conv-big.json").read_bytes()

    def no_rename(src: object, dst: object) -> None:
        raise OSError(5, "Input/output error")  # a crash at the rename: the new file never replaces the old one

    monkeypatch.setattr(tinydb_storage.os, "replace", no_rename)
    store = Store.open(folder, bounding=FolderBounding(folder / "blobs"))
    try:
        (message,) = [e for e in store.events("big") if isinstance(e, Submitted)]
    finally:
        store.close()
    monkeypatch.undo()
    assert (folder / "conv-big.json").read_bytes() == before  # the old file, whole
    assert message.text == text and message.whole is None  # read as it is on disk: the rewrite did not happen
    assert not list(folder.glob(".conv-big.json.*.tmp"))
    again = Store.open(folder, bounding=FolderBounding(folder / "blobs"))
    try:
        (message,) = [e for e in again.events("big") if isinstance(e, Submitted)]
    finally:
        again.close()
    assert message.whole is not None and read_text(FolderBlobs(folder / "blobs"), message.whole) == text


def test_a_cut_that_could_not_be_written_leaves_the_answer_whole_in_what_is_read_and_in_the_next_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review of this change: the documents were cut in place before the rewrite, so a failed rewrite left the
    cut ones in the store's memory, and the next batch wrote them over the file (the original link removed)."""
    folder = tmp_path / "data"
    text = long_text(2 * TEXT_BOUND + 100)
    answer = Persisted(conversation_id="big", ts=stamp(T0), message_id="m1", attempt_id="a1", status="complete",
                       text=text)  # fmt: skip
    write_tinydb_folder(folder, {"big": [Created(conversation_id="big", ts=stamp(T0)), answer]})

    def no_rename(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tinydb_storage.os, "replace", no_rename)
    store = Store.open(folder, bounding=FolderBounding(folder / "blobs"))
    try:
        (read,) = [e for e in store.events("big") if isinstance(e, Persisted)]
        monkeypatch.undo()
        store.append(_submitted("and one more question"))
    finally:
        store.close()  # the batch with the new question is written: the whole file, from what was read
    assert read.text == text
    assert json.loads((folder / "conv-big.json").read_bytes())["events"]["2"]["text"] == text
    assert not list(folder.glob("conv-big.json.whole-*"))


def _submitted(text: str) -> Submitted:
    return Submitted(conversation_id="big", ts=stamp(T0), message_id="u1", turn=1, text=text)
