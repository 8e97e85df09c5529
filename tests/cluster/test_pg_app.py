"""The real app with ``--database-url``: it answers in Chromium, comes back after a restart or a ``kill -9`` with
the same chat, its database password appears nowhere (start-up line, log, page, export), and a file attached on
one instance is shown by a tab on another (the blob is in the database)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import psycopg
import pytest
from PIL import Image
from playwright.sync_api import expect

from app.config import ConfigError, load_config
from store.postgres.store import PgStore
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages, conversation_id, last_answer, send, visible_words, wait_words
from tests.support.instances import AppAfterApp
from tests.support.postgres import PASSWORD
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until_blocking

WORDS = [f"w{n}" for n in range(600)]


def test_a_database_url_is_never_shown_in_a_setting_error_or_the_settings() -> None:
    with pytest.raises(ConfigError) as error:
        load_config(["--database-url", f"mysql://ledger:{PASSWORD}@db/x"], {})
    assert PASSWORD not in str(error.value) and "--database-url" in str(error.value)
    config = load_config([], {"LEDGERCHAT_DATABASE_URL": f"postgresql://ledger:{PASSWORD}@db/x"})
    assert config.database_url and PASSWORD not in repr(config)


def test_the_app_on_postgresql_answers_and_another_instance_shows_the_same_chat_after_a_restart(
    open_page: Pages, upstream: ScriptedUpstream, app_after_app_on_one_database: AppAfterApp
) -> None:
    apps = app_after_app_on_one_database
    with apps.start() as first:
        page = open_page(first)
        upstream.plan(Behavior(text="stored in postgres", chunk_delay=0.01))
        send(page, "hello")
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        cid = conversation_id(page)
    with apps.start() as second:
        page.goto(f"{second.url}/chat/{cid}")
        expect(last_answer(page)).to_contain_text("stored in postgres")
        assert not (second.data_dir / f"conv-{cid}.json").exists(), "the ledger is in the database, not in files"
    logs = first.log.read_text() + second.log.read_text()
    assert PASSWORD not in logs and PASSWORD not in page.content()
    assert f"postgresql://ledger:[redacted]@127.0.0.1:{apps.url.rsplit(':', 1)[1]}" in logs


def test_killing_an_instance_mid_stream_and_restarting_on_the_database_shows_the_answer_interrupted(
    open_page: Pages, upstream: ScriptedUpstream, app_after_app_on_one_database: AppAfterApp
) -> None:
    apps = app_after_app_on_one_database
    with apps.start() as first:
        page = open_page(first)
        upstream.plan(Behavior(text=" ".join(WORDS), chunk_delay=0.02))
        send(page, "long story")
        cid = conversation_id(page)
        wait_words(page, 15)
        seen = visible_words(page)
        wait_until_blocking(
            lambda: len(first.stored_text(cid).split()) >= len(seen), what="the words seen reaching the database"
        )
        first.kill()
    with apps.start() as second:
        page.goto(f"{second.url}/chat/{cid}")
        expect(last_answer(page)).to_have_attribute("data-status", "interrupted")
        expect(last_answer(page)).to_contain_text("Stopped: the server restarted")
        words = wait_until_blocking(lambda: visible_words(page), what="the interrupted answer's words")
        assert len(words) >= len(seen) and words == WORDS[: len(words)]
    ledger = PgStore.open(apps.url, read_only=True).events(cid)
    assert [e.KIND for e in ledger][-2:] == ["recovered", "persisted"]
    assert ledger[-1].status == "interrupted" and ledger[-1].text.split() == words


def test_an_image_attached_on_one_instance_is_shown_by_a_tab_on_the_other(
    open_page: Pages, upstream: ScriptedUpstream, database_url: str, run_app: AppRunner, tmp_path: Path
) -> None:
    info = tmp_path / "models.json"
    info.write_text(json.dumps({"openai/test-model": {"supports_vision": True}}))
    image = io.BytesIO()
    Image.new("RGB", (160, 90), (20, 140, 60)).save(image, "PNG")
    with run_app.together(2, "--database-url", database_url, "--model-info", str(info)) as (a, b):
        page = open_page(a)
        page.locator("input.lc-file-input").set_input_files(
            [{"name": "green.png", "mimeType": "image/png", "buffer": image.getvalue()}]
        )
        expect(page.locator(".lc-tray [data-attachment]")).to_have_count(1)
        upstream.plan(Behavior(text="a green rectangle", chunk_delay=0.01))
        send(page, "what is this?")
        expect(last_answer(page)).to_have_attribute("data-status", "complete")
        sha = str(page.locator(".lc-user [data-attachment]").get_attribute("data-attachment"))
        other = open_page(b, f"/chat/{conversation_id(page)}")
        shown = other.locator(".lc-user img")
        expect(shown).to_have_attribute("src", f"/files/{sha}/thumb")
        other.wait_for_function("() => document.querySelector('.lc-user img').naturalWidth > 0")
        served = other.request.get(f"{b.url}/files/{sha}")
        assert served.ok and hashlib.sha256(served.body()).hexdigest() == sha, "B serves the bytes A stored"
    with psycopg.connect(database_url) as conn:
        assert conn.execute("SELECT count(*) FROM blobs WHERE sha256 = %s", (sha,)).fetchone() == (1,)
