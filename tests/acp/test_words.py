"""What an editor's prompt becomes and how an ended attempt answers it (``editor.words``, pure)."""

from __future__ import annotations

import base64

import pytest
from acp import RequestError, text_block
from acp.helpers import (
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
)

from editor.words import failure, prompt_files, prompt_text, stop_reason
from ledger.state import AttemptState


def test_a_prompts_text_links_and_embedded_text_resources_become_one_message_in_order() -> None:
    blocks = [
        text_block("Explain this function:"),
        resource_link_block("main.py", "file:///p/main.py", title="main.py"),
        resource_block(embedded_text_resource("file:///p/a.py", "def f():\n    return 1")),
        resource_block(embedded_blob_resource("file:///p/logo.png", "iVBOR", mime_type="image/png")),
    ]
    assert prompt_text(blocks) == (
        "Explain this function:\n\n[main.py](file:///p/main.py)\n\nfile:///p/a.py:\n```\ndef f():\n    return 1\n```"
    ), "the binary resource is a file of the message, not text"


def test_images_and_embedded_binary_resources_are_the_prompts_files_named_after_their_uri_or_place() -> None:
    png = base64.b64encode(b"\x89PNG fake").decode()
    blocks = [
        text_block("What is in these?"),
        image_block(png, "image/png"),
        resource_block(embedded_blob_resource("file:///p/logo.svg", base64.b64encode(b"<svg/>").decode())),
        image_block(png, "image/png", uri="file:///shots/screen%201.png"),
    ]
    assert prompt_files(blocks) == [
        ("attachment-2.png", b"\x89PNG fake"),
        ("logo.svg", b"<svg/>"),
        ("screen 1.png", b"\x89PNG fake"),
    ]
    assert prompt_text(blocks) == "What is in these?"
    with pytest.raises(RequestError) as refused:
        prompt_files([image_block("not base64!", "image/png")])
    assert refused.value.code == -32602


def attempt(**fields: object) -> AttemptState:
    return AttemptState(attempt_id="a1", message_id="m1", number=1, model="x")._replace(**fields)


def test_each_end_of_an_attempt_answers_the_prompt_with_its_stop_reason_or_an_error() -> None:
    assert stop_reason(attempt(status="complete")) == "end_turn"
    assert stop_reason(attempt(status="complete", finish_reason="length")) == "max_tokens"
    assert stop_reason(attempt(status="complete", finish_reason="content_filter")) == "refusal"
    assert stop_reason(attempt(status="interrupted", cancel_source="acp")) == "cancelled"
    assert stop_reason(attempt(status="empty", cancel_source="user")) == "cancelled"
    assert stop_reason(attempt(status="failed", error_type="step_limit")) == "max_turn_requests"
    stalled = attempt(status="failed", error_type="timeout", cancel_source="timeout")  # the model stopped sending
    assert stop_reason(stalled) is None, "an error, not a cancel the editor asked for"
    failed = attempt(status="failed", error_type="rate_limit", http_status=429, error_summary="Slow down (HTTP 429).")
    assert stop_reason(failed) is None
    error = failure(failed)
    assert (error.code, str(error), error.data["http_status"]) == (-32603, "Slow down (HTTP 429).", 429)


def test_the_acp_command_path_imports_no_nicegui() -> None:
    import subprocess
    import sys

    from tests.support.app_process import ROOT

    loads = "import app.cli, app.acp, app.parts, app.cluster, app.telemetry, editor, demo.server, uvicorn"
    check = f"{loads}; import sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'nicegui'))"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
