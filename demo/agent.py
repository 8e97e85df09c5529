"""How the demo model uses tools, and the history check every OpenAI-compatible provider makes.

Guarantees:
- ``history_problem`` rejects, with OpenAI's wording, any history where an assistant message with ``tool_calls``
  is not followed by exactly one ``tool`` message per ``tool_call_id``, or a ``tool`` message answers no call.
- ``tool_move`` decides the demo model's next move when tools are offered: the calls of the next round (one per
  round), or, once the plan's rounds are answered, a final answer built from the tool results. Plans: a question
  about the time calls ``current_time``; "compute 17*23" calls ``calculator``; ``#tools`` chains
  ``search_notes`` and ``slow_task`` (8 s, to press Stop during it); ``#toolfail`` calls ``always_fails``;
  ``#twotools`` asks for ``slow_task`` and ``current_time`` in one step. A tool the request does not offer is
  never called.
"""

from __future__ import annotations

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
