"""Images in ``session/prompt``, over real stdio: an agent whose model takes images (declared with ``--model-info``)
says so in ``promptCapabilities.image``, stores a prompt's image as the message's attachment (by sha256, as the page
does) and sends it to the model as an image part; one whose model takes none does not declare images, and an image
sent anyway is refused with invalid params and the page's sentence, the ledger untouched."""

from __future__ import annotations

import base64
import hashlib
import io
import json
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.helpers import image_block
from PIL import Image

from ledger.events.core import Persisted, Submitted
from store.blobs import FolderBlobs
from tests.acp.conftest import Editor, ledger_events, start_agent
from tests.support.app_process import ROOT
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


def png() -> str:
    """A small red PNG, base64 (as an editor sends a pasted screenshot)."""
    out = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 30, 30)).save(out, "PNG")
    return base64.b64encode(out.getvalue()).decode()


async def test_an_image_of_a_prompt_is_stored_as_its_attachment_and_reaches_a_model_that_takes_images(
    tmp_path: Path, scripted: ScriptedUpstream
) -> None:
    info = tmp_path / "models.json"
    info.write_text(json.dumps({"openai/test-model": {"supports_vision": True, "mode": "chat"}}))
    data_dir = tmp_path / "data"
    async with start_agent(data_dir, scripted, "--model-info", str(info)) as editor:
        answered = await editor.conn.initialize(protocol_version=1)
        assert answered.agent_capabilities.prompt_capabilities.image is True
        sid = await editor.new_session()
        scripted.plan(Behavior(text="A red square."))
        prompt = [text_block("What is this?"), image_block(png(), "image/png", uri="file:///shots/red.png")]
        assert (await editor.conn.prompt(session_id=sid, prompt=prompt)).stop_reason == "end_turn"
        await wait_until(lambda: any(isinstance(e, Persisted) for e in ledger_events(data_dir, sid)), 30, "saved")
        editor.updates[sid] = []
        await editor.conn.load_session(cwd=str(ROOT), session_id=sid, mcp_servers=[])
        text, link = [u.content for u in editor.of_kind(sid, "user_message_chunk")]
    [sent] = [e for e in ledger_events(data_dir, sid) if isinstance(e, Submitted)]
    assert sent.text == "What is this?"
    [attached] = sent.attachments
    assert (attached.name, attached.media_type, attached.width, attached.height) == ("red.png", "image/png", 8, 6)
    stored = FolderBlobs(data_dir / "blobs", read_only=True).get(attached.sha256)
    assert stored is not None and hashlib.sha256(stored).hexdigest() == attached.sha256, "stored by its sha256"
    assert text.text == "What is this?", "a loaded session replays the message"
    assert (link.type, link.uri, link.name, link.mime_type) == (
        "resource_link",
        f"ledgerchat:files/{attached.sha256}",
        "red.png",
        "image/png",
    ), "and links its image by content"
    [user] = [m for m in scripted.last.messages if m["role"] == "user"]
    parts = {p["type"]: p for p in user["content"]}
    assert parts["text"]["text"] == "What is this?"
    assert parts["image_url"]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(stored).decode()


async def test_an_agent_whose_model_takes_no_images_does_not_declare_them_and_refuses_one_sent_anyway(
    agent: Editor, scripted: ScriptedUpstream
) -> None:
    answered = await agent.conn.initialize(protocol_version=1)
    assert answered.agent_capabilities.prompt_capabilities.image is False
    sid = str((await agent.conn.new_session(cwd=str(ROOT), mcp_servers=[])).session_id)
    with pytest.raises(RequestError) as refused:
        await agent.conn.prompt(session_id=sid, prompt=[text_block("look"), image_block(png(), "image/png")])
    assert refused.value.code == -32602 and "does not take images" in refused.value.data["details"]
    assert not [e for e in ledger_events(agent.data_dir, sid) if isinstance(e, Submitted)], "nothing recorded"
