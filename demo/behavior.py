"""How the demo model answers one request (``Behavior``), and how a prompt's fault tags choose it.

Guarantees:
- ``Behavior`` is a frozen value: the text (None: a demo answer for the last user message), its reasoning, the
  tool calls to stream, the pacing (``chunk_delay`` between chunks, ``first_delay`` before the first), the usage
  reported (``input_tokens``, ``cached_tokens``), and the faults: an HTTP ``status`` instead of a stream (with its
  ``message`` and ``retry_after``), a stream that drops (``drop_how``: mid-body, cleanly without
  the end marker, or with a reset), turns malformed, stalls or sends the provider's error
  event (``error_after``) after so many chunks, or one the safety filter ends (``blocked``). One ``Behavior``
  drives every dialect (``demo.dialects``).
- ``FaultTags.behavior`` reads the tags of the last user message: ``#html`` (hostile markup as the answer),
  ``#long`` (four answers in one), ``#slow`` (3 s before the first chunk), ``#429``, ``#500``, ``#401``,
  ``#toolong`` (400 in the dialect's words for a request over the context window: ``Dialect.too_long``; that
  status; with several, the later in this list wins), ``#drop`` (the connection is cut after 25 chunks), ``#stall`` (no
  chunk after 15) and ``#malformed`` (a broken chunk after 10). With ``transient`` a fault hits only the first tries
  of the same prompt (``#429`` and the in-stream faults once, ``#500`` three times, ``#401`` always), so that an
  automatic re-send or a Retry visibly succeeds afterwards (``#toolong``: until the request carries a summary of
  the earlier turns, ``demo.answers.compacted``, so that Compact and retry visibly succeeds). A compaction's
  summary request (``demo.answers.is_summary_request``) and a title request quote earlier messages: their tags do
  not apply to them.
- The per-prompt counters keep at most ``MAX_PROMPTS`` prompts (they start over past it): memory stays bounded.
  ``FaultTags`` is not thread-safe; its owner calls it under a lock.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from demo.agent import PlannedCall
from demo.answers import compacted, demo_answer, is_summary_request, is_title_request

DropHow = Literal["incomplete", "clean", "reset"]
HOSTILE = (
    'Here is some **markup**: <script>window.__pwned = true</script> <img src=x onerror="window.__pwned=true"> '
    '<b>bold?</b> and a [link](javascript:window.__pwned=true) and <a href="javascript:alert(1)">click</a>. '
    "Everything above must show as text."
)
MAX_PROMPTS = 50


@dataclass(frozen=True, slots=True)
class Behavior:
    """How the upstream answers one request."""

    text: str | None = None
    chunk_delay: float = 1 / 30
    first_delay: float = 0.0
    status: int | None = None
    drop_after: int | None = None
    #: how a drop cuts the connection: ``incomplete`` (closed mid-body: a chunked body without its last chunk),
    #: ``clean`` (the body ends properly but without the dialect's end marker, as a proxy's idle timeout ends it)
    #: or ``reset`` (a TCP reset)
    drop_how: DropHow = "incomplete"
    malformed_after: int | None = None
    stall_after: int | None = None
    reasoning: str | None = None
    usage: bool = True
    tool_calls: list[PlannedCall] = field(default_factory=list)
    input_tokens: int | None = None  # the prompt tokens reported (None: the words of the request)
    cached_tokens: int = 0  # of those, read from the provider's prompt cache
    retry_after: float | None = None  # seconds, sent with an error status (each dialect in its own way)
    message: str | None = None  # the error's message (None: the dialect's usual one for the status)
    blocked: bool = False  # the answer ends blocked by the provider's safety filter (each dialect's way)
    cut: bool = False  # the answer ends at the output limit (OpenAI's ``finish_reason`` "length")
    error_after: int | None = None  # the provider's in-stream error event after so many chunks (its ``message``)
    too_long: bool = False  # a 400 in the dialect's words for a request over the model's context window


class FaultTags:
    """The behaviour the tags of a prompt ask for, and how many times each prompt was asked (for ``transient``)."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def behavior(self, messages: list[dict[str, Any]], *, chunk_delay: float, transient: bool) -> Behavior:
        """The behaviour for this request from the tags in its last user message (counts the prompt as seen)."""
        prompt = last_user(messages)
        quoted = is_summary_request(prompt) or is_title_request(prompt)  # they quote earlier messages
        tags = set() if quoted else set(re.findall(r"#(\w+)", prompt))
        key = f"{len(messages)}:{prompt}"
        if len(self._seen) > MAX_PROMPTS:
            self._seen.clear()
        seen = self._seen[key] = self._seen.get(key, 0) + 1
        text: str | None = None
        if "html" in tags:
            text = HOSTILE
        if "long" in tags:
            text = "\n\n".join(demo_answer(f"{prompt} {n}") for n in range(4))
        status: int | None = None
        if "429" in tags and (not transient or seen <= 1):
            status = 429
        if "500" in tags and (not transient or seen <= 3):
            status = 500
        if "401" in tags:
            status = 401
        too_long = "toolong" in tags and not compacted(messages)  # too long until its earlier turns are summarized
        if too_long:
            status = 400
        once = not transient or seen <= 1
        return Behavior(
            text=text,
            chunk_delay=chunk_delay,
            first_delay=3.0 if "slow" in tags else 0.0,
            status=status,
            drop_after=25 if "drop" in tags and once else None,
            stall_after=15 if "stall" in tags and once else None,
            malformed_after=10 if "malformed" in tags and once else None,
            too_long=too_long,
        )


def last_user(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message (structured content as JSON), or "" when there is none."""
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""
