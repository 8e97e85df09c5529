"""A tool result over the bound (``ledger.bounds``) is kept whole as a blob and recorded as its preview; the model
gets it within ``--tool-result-chars`` with a note that counts the whole."""

from __future__ import annotations

import json

from mcp.types import CallToolResult, TextContent

from engine.tools.result_content import convert
from ledger.bounds import PREVIEW_BYTES, TEXT_BOUND, preview
from ledger.events.core import Created, Started, Submitted, ToolCalled, ToolResult
from ledger.history import attempt_entries
from ledger.reducer import replay
from store.blobs import MemoryBlobs, read_text


def big(size: int) -> str:
    return "".join(f"row {n:09d}: ünïcode ✓\n" for n in range(size // 24 + 1))


async def test_a_text_result_over_the_bound_is_a_blob_and_its_preview() -> None:
    blobs, text = MemoryBlobs(), big(3 * TEXT_BOUND)
    got = await convert(CallToolResult(content=[TextContent(type="text", text=text)]), blobs)
    assert got.whole is not None and got.text == preview(text) and len(got.text.encode()) <= PREVIEW_BYTES
    assert read_text(blobs, got.whole) == text and (got.whole.chars, got.whole.size) == (len(text), len(text.encode()))


async def test_structured_content_over_the_bound_is_kept_in_the_whole_text_not_cut_in_the_event() -> None:
    blobs, rows = MemoryBlobs(), [big(1000) for _ in range(1500)]
    structured = {"rows": rows}
    got = await convert(CallToolResult(content=[TextContent(type="text", text="see rows")],
                                       structured_content=structured), blobs)  # fmt: skip
    assert got.whole is not None and got.structured is None and got.text == "see rows"
    assert json.loads(read_text(blobs, got.whole).split("\n\n", 1)[1]) == structured


async def test_a_result_within_the_bound_is_kept_as_it_was() -> None:
    got = await convert(CallToolResult(content=[TextContent(type="text", text="small")]), MemoryBlobs())
    assert got.whole is None and got.text == "small"


async def test_the_model_gets_a_bounded_result_within_the_limit_with_a_note_counting_the_whole() -> None:
    blobs, text = MemoryBlobs(), big(2 * TEXT_BOUND)
    got = await convert(CallToolResult(content=[TextContent(type="text", text=text)]), blobs)
    assert got.whole is not None
    ids = {"conversation_id": "c", "attempt_id": "a1"}
    events = [
        Created(seq=1, conversation_id="c"),
        Submitted(seq=2, conversation_id="c", message_id="u1", turn=1, text="go"),
        Started(seq=3, **ids, message_id="m1", user_message_id="u1", turn=1, model="demo"),
        ToolCalled(seq=4, **ids, step=1, call_id="k", name="dump", arguments="{}"),
        ToolResult(seq=5, **ids, call_id="k", status="ok", content=got.text, size=got.whole.chars, whole=got.whole),
    ]
    conv = replay(events).conversations["c"]
    (tool,) = [e for e in attempt_entries(conv.attempts["a1"], 20_000) if e.role == "tool"]
    assert tool.content is not None and tool.content.startswith(text[:20_000])
    assert tool.content.endswith(f"[… {len(text) - 20_000:,} more characters cut; the full result is in the ledger]")
