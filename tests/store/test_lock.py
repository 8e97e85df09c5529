"""One process per data folder: a second writer is refused naming the first; readers never need the lock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from ledger.errors import DataDirInUseError, StoreError
from ledger.events.core import Created
from store.tinydb.store import Store
from tests.support.app_process import ROOT, AppProcess, free_port
from tests.support.ledger_builders import conversation_events

# A child that holds the lock until the test kills it (its sleep is a hold, not a synchronization wait).
HOLD = "import sys, time; from store.tinydb.store import Store; Store.open(sys.argv[1]); " + (
    "print('held', flush=True); time.sleep(60)"  # stream on until the test kills this process: a hold, not a wait
)


def test_a_second_store_on_the_same_folder_is_refused_naming_the_holder(tmp_path: Path) -> None:
    first = Store.open(tmp_path)
    with pytest.raises(DataDirInUseError, match=rf"in use by another Ledger Chat \(process {os.getpid()}\)") as e:
        Store.open(tmp_path)
    assert isinstance(e.value, StoreError) and e.value.pid == os.getpid()
    assert (tmp_path / ".lock").read_text().strip() == str(os.getpid())
    first.close()
    Store.open(tmp_path).close()


def test_the_lock_dies_with_its_process_even_when_it_is_killed(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DataDirInUseError, match=f"process {holder.pid}"):
            Store.open(tmp_path)
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        holder.kill()
    Store.open(tmp_path).close()


def test_a_read_only_store_needs_no_lock_and_leaves_it_alone(tmp_path: Path) -> None:
    writer = Store.open(tmp_path)
    written = [writer.append(e) for e in conversation_events("c1", answers=1, chunks=3)]
    assert writer.flush_sync()
    reader = Store.open(tmp_path, read_only=True)
    assert list(reader.events("c1")) == written
    writer.append(Created(conversation_id="c2", ts="", title="the writer goes on"))
    assert writer.close() == 0


def test_a_second_app_on_the_same_data_dir_exits_naming_the_first_and_the_first_keeps_its_data(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = Store.open(data)
    [store.append(e) for e in conversation_events("c1", answers=2, chunks=5)]
    store.close()
    first = AppProcess(data, None).start()
    try:
        before = {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()}
        second = subprocess.run(
            [sys.executable, str(ROOT / "main.py"), "--port", str(free_port()), "--data-dir", str(data)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0
        named = [line for line in second.stderr.splitlines() if line.startswith("ledger-chat: ")]
        assert len(named) == 1 and f"(process {first.proc.pid})" in named[0] and str(data) in named[0]
        assert {p.name: p.read_bytes() for p in data.iterdir() if p.is_file()} == before, (
            "the second process wrote nothing"
        )
        assert len(first.export("c1")) == len(conversation_events("c1", answers=2, chunks=5))
        with httpx.Client(base_url=first.url) as http:
            assert http.get("/chat/c1").status_code == 200, "the first one goes on serving"
    finally:
        first.stop()
    assert len(first.export("c1")) == len(conversation_events("c1", answers=2, chunks=5))
