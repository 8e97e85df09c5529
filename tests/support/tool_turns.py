"""What a tool turn left behind, read back for assertions: the ledger's result of each call, and which calls the
model was sent and answered in a request's messages.

``results(engine, cid)`` is every ``ToolResult`` of a conversation by its call id (a later one for the same id
wins, so a test sees the one the ledger kept last); ``call_ids(messages)`` the tool calls the assistant messages
carry, in order; ``tool_messages(messages)`` the call ids of the tool messages (the answers), in order.
"""

from __future__ import annotations

from engine.commands import Engine
from ledger.events.core import ToolResult


def results(engine: Engine, cid: str) -> dict[str, ToolResult]:
    return {e.call_id: e for e in engine.events(cid) if isinstance(e, ToolResult)}


def tool_messages(messages: list[dict]) -> list[str]:
    return [m["tool_call_id"] for m in messages if m["role"] == "tool"]


def call_ids(messages: list[dict]) -> list[str]:
    return [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
