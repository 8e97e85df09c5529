"""litellm's parsed chunks (``ModelResponseStream``) as the engine's pieces, as litellm's stream wrapper reads them.

Guarantees (``Pieces.take``, one chunk at a time, from Anthropic's, Gemini's and Ollama's litellm parsers):
- Reasoning (``reasoning_content``), then text (``content``), then one ``ToolPiece`` per tool-call piece (its
  ``index``; id and name where the parser gave them: Anthropic's ``content_block_start``, the whole call Gemini and
  Ollama send, with the id litellm makes up), in that order, as ``ProviderStream`` queues them; empty ones skipped.
- ``finish_reason()``: the last finish reason the parser gave, mapped by litellm (``map_finish_reason``), and
  "stop" after a tool call read as "tool_calls", as the wrapper's last chunk says it.
- ``reported``: the prompt side of the latest usage the provider sent (Anthropic's ``message_start``, Gemini's
  ``usageMetadata``), partial; ``final_usage``: the last usage the provider sent (each parser's is cumulative:
  Anthropic's merges ``message_start`` and ``message_delta``), its reasoning tokens counted from the streamed
  reasoning by litellm's tokenizer when the provider reported none, capped at the output tokens, as litellm's
  chunk builder counts them for the wrapper's last chunk.
- Per chunk: attribute reads and at most three small values; nothing imports or calls litellm until the end.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any

from engine.provider.calls import Delta, ToolPiece, read_usage, tool_piece
from ledger.events import Usage

__all__ = ["Pieces"]


class Pieces:
    """The pieces, finish reason and usage of one stream's parsed chunks."""

    __slots__ = ("_last_usage", "_reasoning", "_text", "count", "finish", "queued", "reported", "tool_seen")

    def __init__(self) -> None:
        self.queued: deque[Delta | ToolPiece] = deque()
        self.count = 0  # chunks that gave a piece
        self.finish: str | None = None
        self.tool_seen = False
        self.reported: Usage | None = None
        self._last_usage: Any = None
        self._text: list[str] = []
        self._reasoning: list[str] = []

    def take(self, chunk: Any) -> bool:
        """Read one parsed chunk; whether it queued a piece."""
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self._last_usage = usage
            if getattr(usage, "prompt_tokens", None):
                self.reported = read_usage(usage, partial=True)
        choices = getattr(chunk, "choices", None)
        if not choices:
            return False
        choice = choices[0]
        if choice.finish_reason:
            self.finish = choice.finish_reason
        delta = choice.delta
        if delta is None:
            return False
        queued = self.queued
        reasoning = getattr(delta, "reasoning_content", None)
        if reasoning:
            self._reasoning.append(reasoning)
            queued.append(Delta(reasoning, "reasoning"))
        content = delta.content
        if content:
            self._text.append(content)
            queued.append(Delta(content))
        calls = getattr(delta, "tool_calls", None)
        if calls:
            self.tool_seen = True
            queued.extend(tool_piece(call) for call in calls)
        if not queued:
            return False
        self.count += 1
        return True

    def text(self) -> str:
        """The answer's text so far (what litellm calls the generated content)."""
        return "".join(self._text)

    def finish_reason(self) -> str | None:
        from litellm.litellm_core_utils.core_helpers import map_finish_reason

        if self.finish is None:
            return None
        mapped = map_finish_reason(self.finish)
        return "tool_calls" if mapped == "stop" and self.tool_seen else mapped

    def final_usage(self, ll: Any) -> Usage | None:
        usage = self._last_usage
        if usage is None:
            return None
        read = read_usage(usage, partial=False)
        details = getattr(usage, "completion_tokens_details", None)
        if self._reasoning and getattr(details, "reasoning_tokens", None) is None:
            counted = ll.token_counter(text="".join(self._reasoning), count_response_tokens=True)
            thought = min(max(0, int(counted)), read.output_tokens)
            read = replace(read, reasoning_tokens=thought)
        return read
