"""The tests' scripted upstream: the demo endpoint plus a queue of planned behaviours and a full request log.

Guarantees: ``plan(*behaviors)`` decides the next requests in order, except that a request whose last message is a
tool result gets ``after_tool_results`` when that is set (so answers whose tools end in any order get the same
reply) and a title request gets ``titles`` when that is set (so a chat's title never takes an answer planned after
it); with nothing planned a request follows the demo model's tags (faults every time, not only on the first try);
``records`` keeps every request since the last ``reset()``. It runs on its own port (``serve``), like any provider,
and speaks every dialect of ``demo.dialects`` on it (``tests.support.dialects`` says which model string and
``api_base`` reach each through litellm).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from demo.agent import PlannedCall
from demo.answers import is_title_request
from demo.behavior import last_user
from demo.server.endpoint import HOSTILE, Behavior, DemoModel, RequestRecord, serve_in_thread

__all__ = ["HOSTILE", "Behavior", "PlannedCall", "RequestRecord", "ScriptedUpstream", "serve"]


class ScriptedUpstream(DemoModel):
    max_records = None  # a test reads every request it caused
    base_url: str = ""
    after_tool_results: Behavior | None = None
    titles: Behavior | None = None

    def __init__(self, *, chunk_delay: float = 0.01) -> None:
        super().__init__(chunk_delay=chunk_delay, transient_faults=False)
        self._plan: deque[Behavior] = deque()

    def plan(self, *behaviors: Behavior) -> None:
        """Queue behaviours for the next requests, in order."""
        with self.lock:
            self._plan.extend(behaviors)

    def reset(self) -> None:
        with self.lock:
            self._plan.clear()
            self.records.clear()
            self.after_tool_results = None
            self.titles = None

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        if self.after_tool_results is not None and messages and messages[-1].get("role") == "tool":
            return self.after_tool_results
        if self.titles is not None and is_title_request(last_user(messages)):
            return self.titles
        return self._plan.popleft() if self._plan else super().choose(messages, tools)

    @property
    def root_url(self) -> str:
        """The server's root: Anthropic's, Gemini's and Ollama's ``api_base`` (OpenAI's is ``base_url``)."""
        return self.base_url.removesuffix("/v1")

    @property
    def last(self) -> RequestRecord:
        assert self.records, "the upstream received no request"
        return self.records[-1]


def serve(chunk_delay: float = 0.01) -> Iterator[ScriptedUpstream]:
    """A scripted upstream on a free 127.0.0.1 port for the duration of a fixture."""
    server = ScriptedUpstream(chunk_delay=chunk_delay)
    base, stop = serve_in_thread(server)
    server.base_url = base
    try:
        yield server
    finally:
        stop()
