"""Exports with the files' bytes: ``main.py export --with-files`` (a zip of events.jsonl and files/<sha256>) and
"Download all chats" (every ledger, its Markdown and the files it names)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from engine.commands.assembly import build_engine
from engine.files import Files
from engine.turns.settings import EngineSettings
from ledger.codec import to_jsonl
from ledger.events.core import Created, Submitted
from store.blobs import sha256_of
from store.blobs.folder import FolderBlobs
from store.tinydb.store import Store
from tests.support.engine import make_settings
from ui.export import archive

ROOT = Path(__file__).resolve().parents[2]
CSV = b"a,b\n1,2\n"
NOTE = b"a note\n"


def folder_with_files(data_dir: Path) -> list[Submitted]:
    files = Files(FolderBlobs(data_dir / "blobs"))
    csv, note = files.accept_now("t.csv", CSV), files.accept_now("n.txt", NOTE)
    gone = files.accept_now("gone.txt", b"deleted later\n")
    files.forget([gone.sha256])
    store = Store.open(data_dir)
    sent = [
        Submitted(conversation_id="c1", message_id="m1", turn=1, text="see", attachments=(csv, note)),
        Submitted(conversation_id="c2", message_id="m2", turn=1, text="again", attachments=(csv, gone)),
    ]
    for event in (Created(conversation_id="c1", title="one"), sent[0], Created(conversation_id="c2"), sent[1]):
        store.append(event)
    store.close()
    return sent


def test_export_with_files_writes_a_zip_of_the_ledger_and_each_named_file_once(tmp_path: Path) -> None:
    folder_with_files(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LEDGERCHAT_"))}
    result = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "export", "--data-dir", str(tmp_path), "--with-files"],
        cwd=ROOT, capture_output=True, timeout=120, env=env,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    zipped = zipfile.ZipFile(io.BytesIO(result.stdout))
    assert sorted(zipped.namelist()) == sorted(["events.jsonl", f"files/{sha256_of(CSV)}", f"files/{sha256_of(NOTE)}"])
    assert zipped.read(f"files/{sha256_of(CSV)}") == CSV
    assert "is no longer stored; left out" in result.stderr.decode()
    store = Store.open(tmp_path, read_only=True)
    assert zipped.read("events.jsonl").decode() == "".join(to_jsonl(store.all_events()))


async def test_download_all_chats_holds_the_bytes_of_every_file_the_chats_name(tmp_path: Path) -> None:
    folder_with_files(tmp_path)
    store = Store.open(tmp_path)
    base = make_settings("http://127.0.0.1:9/v1")
    engine = build_engine(store, EngineSettings(provider=base.provider, files=Files(FolderBlobs(tmp_path / "blobs"))))
    try:
        zipped = zipfile.ZipFile(io.BytesIO(archive(engine)))
        names = set(zipped.namelist())
        chats = {"one (c1).jsonl", "one (c1).md", "again (c2).jsonl"}  # its title, its id
        assert chats | {f"files/{sha256_of(CSV)}", f"files/{sha256_of(NOTE)}"} <= names
        assert len([n for n in names if n.startswith("files/")]) == 2
        assert zipped.read(f"files/{sha256_of(NOTE)}") == NOTE
        assert f"- attached: t.csv (text/csv, 8 bytes): files/{sha256_of(CSV)}" in zipped.read("one (c1).md").decode()
    finally:
        await engine.shutdown()
        store.close()
