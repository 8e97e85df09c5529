"""Exports a person can read or keep: one chat as Markdown (the shown path), every chat as one zip archive.

Guarantees: the Markdown holds exactly the messages shown (the selected path), each answer with its model and
how it ended, tool calls with their arguments and results (long results cut, with a note), reasoning left out;
the archive holds, per conversation, its JSON Lines ledger (the public format of docs/ledger.md) and its Markdown,
named "its title (its id)" (``ui.download_names.chat_file_name``),
and once each the bytes of every file those ledgers name, as ``files/<sha256>`` (a file that is gone is left out:
the ledger still names it); ``presets.json`` (every version of every agent preset: what attempts were told) and
``costs.json`` (each attempt priced, summed per chat and in all: ``engine.provider.cost``). The Markdown names each
attached file and where its bytes are in the archive.
Both are made from the engine's state and ledger, in memory, and never include a key or token. The archive
covers every conversation, loaded or not (those not loaded are read one at a time and not kept);
``archive_async`` builds it in a worker thread, so the event loop never waits for the files.
"""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from collections.abc import Iterable

from engine.commands import Engine
from engine.files import referenced_by
from engine.people import PERSONAL, Viewer
from engine.provider import CostReport
from ledger.codec import to_jsonl
from ledger.presets import dumps
from ledger.state import ConversationState
from ledger.tree import selected_path
from ui.continued_view import answer_steps
from ui.download_names import chat_file_name
from ui.format import model_label, stopped_text

RESULT_CHARS = 2_000


def conversation_markdown(conv: ConversationState) -> str:
    lines = [f"# {conv.title or 'New conversation'}", ""]
    for message_id in selected_path(conv):
        message = conv.messages[message_id]
        if message.role == "user":
            files = message.attachments
            lines += ["## You", "", message.text, ""]
            lines += [f"- attached: {a.name} ({a.media_type}, {a.size:,} bytes): files/{a.sha256}" for a in files]
            lines += [""] if files else []
            continue
        attempt = conv.attempts.get(message.selected_attempt_id or "")
        if attempt is None:
            continue
        ending = {"complete": "", "failed": f" — failed: {attempt.error_summary or 'error'}"}.get(
            attempt.status, f" — {stopped_text(attempt)}"
        )
        lines += [f"## Assistant ({model_label(attempt.model)}){ending}", ""]
        for text, calls in answer_steps(conv, attempt):  # a continued answer: all of it (``ui.continued_view``)
            if text:
                lines += [text, ""]
            for call in calls:
                result = call.content if len(call.content) <= RESULT_CHARS else call.content[:RESULT_CHARS] + " […]"
                lines += [f"> Tool `{call.name}` {call.arguments} → {call.status or 'no result'}", ">"]
                lines += [f"> {line}" for line in (result or "(empty)").splitlines()] + [""]
    return "\n".join(lines).rstrip() + "\n"


async def archive_async(engine: Engine, viewer: Viewer = PERSONAL) -> bytes:
    """``archive`` of the conversations ``viewer`` sees, built in a worker thread over a snapshot of the state."""
    state = engine.state
    return await asyncio.to_thread(lambda: _zip(engine, engine.read_conversations(state, viewer), viewer))


def archive(engine: Engine) -> bytes:
    """Every conversation's ledger (JSON Lines) and Markdown, zipped."""
    return _zip(engine, engine.read_conversations())


def _zip(engine: Engine, conversations: Iterable[ConversationState], viewer: Viewer = PERSONAL) -> bytes:
    buffer, written, costs = io.BytesIO(), set[str](), CostReport()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("presets.json", dumps(engine.presets.versions(viewer=viewer)))  # every version ``viewer`` uses
        for conv in conversations:
            costs.add(conv)
            cid, name = conv.conversation_id, chat_file_name(conv)  # "Its title (its id)"
            zipped.writestr(f"{name}.jsonl", "".join(to_jsonl(engine.events(cid))).encode("utf-8", "replace"))
            zipped.writestr(f"{name}.md", conversation_markdown(conv).encode("utf-8", "replace"))
            for sha in sorted(referenced_by(conv) - written):
                data = engine.files.read(sha)
                if data is not None:
                    zipped.writestr(f"files/{sha}", data)
                    written.add(sha)
        zipped.writestr("costs.json", json.dumps(costs.as_dict(), indent=1))  # per attempt, per chat and in all
    return buffer.getvalue()
