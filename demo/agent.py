"""How the demo model uses tools, and the history check every OpenAI-compatible provider makes.

Guarantees:
- ``history_problem`` rejects, with OpenAI's wording, any history where an assistant message with ``tool_calls``
  is not followed by exactly one ``tool`` message per ``tool_call_id``, or a ``tool`` message answers no call.
- ``tool_move`` decides the demo model's next move when tools are offered: the calls of the next round (one per
  round), or, once the plan's rounds are answered, a final answer built from the tool results. Plans: a question
  about the time calls ``current_time``; "compute 17*23" calls ``calculator``; ``#tools`` chains
  ``search_notes`` and ``slow_task`` (8 s, to press Stop during it); ``#toolfail`` calls ``always_fails``;
  ``#twotools`` asks for ``slow_task`` and ``current_time`` in one step; ``#chart``, ``#notesfile`` and ``#beep``
  call ``draw_chart`` (an image), ``notes_file`` (a resource and a link) and ``beep`` (audio); ``#order`` calls
  ``place_order`` (it asks the person a question: a form); ``#delete`` calls ``delete_note`` (destructive: it waits
  for Run or Skip). A tool the request does not offer is never called.
- ``describe_files`` says what the demo model can read of a user message's files (content parts): each file's
  name, type and size, a text file's first lines, an image's dimensions, a PDF's pages.
"""

from __future__ import annotations

import base64
import io
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

MISSING = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
    "The following tool_call_ids did not have response messages: {ids}"
)
ORPHAN = "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."


@dataclass(frozen=True, slots=True)
class PlannedCall:
    """A tool call the upstream streams: its arguments string is sent in ``pieces`` parts."""

    name: str
    arguments: str = "{}"
    call_id: str | None = None
    pieces: int = 3


def history_problem(messages: list[dict[str, Any]]) -> str | None:
    """The 400 message a provider gives for this history, or None when it is valid."""
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.get("role") == "tool":
            return ORPHAN
        index += 1
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            continue
        answered: list[str] = []
        while index < len(messages) and messages[index].get("role") == "tool":
            answered.append(str(messages[index].get("tool_call_id")))
            index += 1
        ids = [str(c.get("id")) for c in calls if isinstance(c, dict)]
        missing = [i for i in ids if answered.count(i) != 1]
        if missing:
            return MISSING.format(ids=", ".join(missing))
        if any(a not in ids for a in answered):
            return ORPHAN
    return None


def tool_move(messages: list[dict[str, Any]], offered: set[str]) -> tuple[str, list[PlannedCall]] | None:
    """(text, calls) for the demo model's next answer when a tool plan applies; None for a plain answer."""
    prompt, after = _since_last_user(messages)
    plan = _plan(prompt)
    if not plan or not all(call.name in offered for round_ in plan for call in round_):
        return None
    rounds = sum(1 for m in after if m.get("role") == "assistant" and m.get("tool_calls"))
    if rounds < len(plan):
        names = ", ".join(f"`{c.name}`" for c in plan[rounds])
        intro = f"Let me use {names}." if rounds == 0 else f"Next, {names}."
        return intro, [PlannedCall(c.name, c.arguments, f"call_{uuid.uuid4().hex[:20]}") for c in plan[rounds]]
    return _answer(after), []


def _plan(prompt: str) -> list[list[PlannedCall]]:
    lower = prompt.lower()
    if "#tools" in lower:
        return [
            [PlannedCall("search_notes", json.dumps({"query": "retries"}))],
            [PlannedCall("slow_task", json.dumps({"seconds": 8}))],
        ]
    if "#twotools" in lower:
        return [[PlannedCall("slow_task", json.dumps({"seconds": 8})), PlannedCall("current_time")]]
    if "#toolfail" in lower:
        return [[PlannedCall("always_fails")]]
    if "#chart" in lower:  # a tool result with an image and structured content (issue 21)
        return [[PlannedCall("draw_chart")]]
    if "#notesfile" in lower:  # an embedded resource and a resource link
        return [[PlannedCall("notes_file")]]
    if "#beep" in lower:  # audio
        return [[PlannedCall("beep")]]
    if "#order" in lower:  # a tool that asks the person a question (issue 22: MCP elicitation)
        return [[PlannedCall("place_order", json.dumps({"item": "T-shirt"}))]]
    if "#delete" in lower:  # a destructive tool: it asks before it runs (issue 22)
        return [[PlannedCall("delete_note", json.dumps({"title": "Caching", "reason": "outdated " * 40}))]]
    if "#slowtool" in lower:
        return [[PlannedCall("slow_task", json.dumps({"seconds": 8}))]]
    expression = re.search(r"(?:compute|calculate)\s+([0-9+\-*/().%\s]+[0-9)])", lower)
    if expression:
        return [[PlannedCall("calculator", json.dumps({"expression": expression.group(1).strip()}))]]
    if re.search(r"\btime\b|\bwhat day\b|\bdate\b", lower):
        return [[PlannedCall("current_time")]]
    return []


def _since_last_user(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].get("role") == "user":
            content = messages[index].get("content")
            return (content if isinstance(content, str) else json.dumps(content)), messages[index + 1 :]
    return "", []


def _answer(after: list[dict[str, Any]]) -> str:
    names = {
        str(c.get("id")): str((c.get("function") or {}).get("name"))
        for m in after
        for c in (m.get("tool_calls") or [])
        if isinstance(c, dict)
    }
    lines = []
    for message in after:
        if message.get("role") == "tool":
            result = str(message.get("content") or "").strip().replace("\n", " ")
            name = names.get(str(message.get("tool_call_id")), "tool")
            lines.append(f"- `{name}`: {result[:300]}")
    return "Here is what the tools returned:\n\n" + "\n".join(lines) + "\n\nThat is everything I found."


FILE_HEADER = re.compile(r"--- (?P<name>.+?) \((?P<kind>[^)]*)\) ---\n")


def content_parts(prompt: str) -> list[dict[str, Any]] | None:
    """The content parts of a user message the endpoint handed on as JSON text, when it has a file in it."""
    if not prompt.startswith("[{"):
        return None
    try:
        parts = json.loads(prompt)
    except ValueError:
        return None
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        return None
    return parts if any(p.get("type") != "text" or is_file_text(p) for p in parts) else None


def is_file_text(part: dict[str, Any]) -> bool:
    """A text part that holds a file (the app heads it ``--- name (type) ---``)."""
    return part.get("type") == "text" and FILE_HEADER.match(str(part.get("text") or "")) is not None


def describe_files(parts: list[dict[str, Any]]) -> str:
    """What the demo model can read of each attached file: name, type, size, a text file's first lines, an
    image's dimensions, a PDF's pages."""
    lines = []
    for part in parts:
        kind = part.get("type")
        if kind == "image_url":
            media, data = _data_url(str((part.get("image_url") or {}).get("url") or ""))
            lines.append(f"- an image ({media}, {_size(len(data))}, {_dimensions(data)})")
        elif kind == "file":
            file = part.get("file") or {}
            media, data = _data_url(str(file.get("file_data") or ""))
            pages = len(re.findall(rb"/Type\s*/Page(?!s)", data))
            lines.append(f"- **{file.get('filename') or 'a file'}** ({media}, {_size(len(data))}, {pages} page(s))")
        elif is_file_text(part):
            text = str(part.get("text"))
            header = FILE_HEADER.match(text)
            assert header is not None
            body = text[header.end() :]
            first = "\n".join(f"    {line}" for line in body.splitlines()[:3])
            size = _size(len(body.encode("utf-8")))
            lines.append(f"- **{header['name']}** ({header['kind']}, {size}), first lines:\n\n{first}\n")
    count = len(lines)
    return f"You attached {count} file{'s' if count != 1 else ''}. Here is what I can read:\n\n" + "\n".join(lines)


def _data_url(url: str) -> tuple[str, bytes]:
    head, _, payload = url.partition(",")
    media = head.removeprefix("data:").split(";")[0] or "unknown type"
    try:
        return media, base64.b64decode(payload)
    except ValueError:
        return media, b""


def _dimensions(data: bytes) -> str:
    try:
        from PIL import Image

        with Image.open(io.BytesIO(data)) as image:
            return f"{image.width}×{image.height} px"
    except Exception:  # noqa: BLE001 - any unreadable image: say so
        return "dimensions unknown"


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 10_000 else f"{count / 1024:,.0f} KB"
