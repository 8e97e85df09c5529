"""The name a download is saved under comes from the ledger: a message's attachment, a tool's file."""

from __future__ import annotations

from immutables import Map

from ledger.events.values import Attachment, ToolPart
from ledger.state import AttemptState, ConversationState, MessageState, ToolCallState
from ui.download_names import ledger_name

SHA_A, SHA_B, SHA_C = "a" * 64, "b" * 64, "c" * 64


def test_a_file_is_named_as_the_ledger_recorded_it_and_an_unknown_one_has_no_name() -> None:
    attachment = Attachment(sha256=SHA_A, name="report.txt", media_type="text/plain", size=5)
    part = ToolPart(kind="resource", sha256=SHA_B, uri="file:///tmp/out/data%20set.csv", name="the data")
    call = ToolCallState(call_id="t1", name="export", step=0, parts=(part,))
    attempt = AttemptState(attempt_id="a1", message_id="m2", number=1, model="demo", tool_calls={"t1": call})
    message = MessageState(message_id="m1", role="user", turn=1, attachments=(attachment,))
    conv = ConversationState(conversation_id="c1", messages=Map({"m1": message}), attempts=Map({"a1": attempt}))
    assert ledger_name([conv], SHA_A) == "report.txt"
    assert ledger_name([conv], SHA_B) == "data_20set.csv", "as the tool card shows it"
    assert ledger_name([conv], SHA_C) is None
