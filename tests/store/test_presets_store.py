"""Preset stores hold every version: the same contract for memory, the JSON file in the data dir and the PostgreSQL
table; a version saved twice is refused, never overwritten; what was saved is read back equal after a reopen; a
damaged file is reported and left as it is."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ledger.errors import StoreError
from ledger.presets import Preset
from store.postgres.presets import PgPresets
from store.presets.stores import FilePresets, MemoryPresets, PresetStore, VersionTaken

Opener = Callable[[], PresetStore]


@pytest.fixture(params=["memory", "file", "postgres"])
def open_presets(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    opened: list[PgPresets] = []
    memory = MemoryPresets()

    def opener() -> PresetStore:
        if request.param == "memory":
            return memory
        if request.param == "file":
            return FilePresets(tmp_path / "data" / "presets.json")
        store = PgPresets.open(request.getfixturevalue("database_url"), instance="test")
        opened.append(store)
        return store

    yield opener
    for store in opened:
        store.close()


ADA = Preset(
    preset_id="preset_ada", version=1, name="Ada « café »", instructions="Answer in French.\nBe brief.",
    model="openai/x", temperature=0.2, top_p=0.5, max_tokens=99, reasoning_effort="low",
    servers=("demo",), tools=("current_time",), approvals=(("*", "ask"), ("current_time", "run")),
    saved_at="2026-12-02T04:00:00.000Z",
)  # fmt: skip


def test_every_version_is_kept_and_read_back_equal_after_a_reopen(open_presets: Opener) -> None:
    store = open_presets()
    second = Preset(preset_id="preset_ada", version=2, name="Ada", instructions="Answer in English.")
    gone = Preset(preset_id="preset_ada", version=3, name="Ada", deleted=True)
    other = Preset(preset_id="preset_bob", version=1, name="Bob", tools=())
    for preset in (ADA, second, other, gone):
        store.add(preset)
    assert open_presets().versions() == [ADA, second, gone, other]


def test_a_version_saved_twice_is_refused_and_the_first_one_stays(open_presets: Opener) -> None:
    store = open_presets()
    store.add(ADA)
    with pytest.raises(VersionTaken):
        open_presets().add(Preset(preset_id="preset_ada", version=1, name="Someone else"))
    assert open_presets().versions() == [ADA]


def test_a_damaged_presets_file_is_reported_and_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "presets.json"
    path.write_text('{"presets": [{"preset_id": "x"', encoding="utf-8")
    with pytest.raises(StoreError, match="presets.json is damaged"):
        FilePresets(path).versions()
    with pytest.raises(StoreError):
        FilePresets(path).add(ADA)
    assert path.read_text(encoding="utf-8") == '{"presets": [{"preset_id": "x"'
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]  # no temp file left behind
