"""What the model saw: the messages of each request of an attempt, rebuilt from the ledger exactly as the engine
built them when it sent the request.

Guarantees:
- The conversation is replayed up to each step's ``step_started`` (the state the engine read when it built that
  step's messages: ``engine.turns.turn``), and the messages are made by the same functions the engine uses: the history
  before the answer (``ledger.continuation_history``: a continuation's prefix included), the attempt's own
  earlier steps and tool results (``attempt_entries``, from step 2), the preset's instructions first
  (``engine.provider.preset_request.with_instructions``, from the preset version the attempt recorded on ``started``).
  Re-sends of a step show the same messages.
- Attachments and binary tool-result parts are shown as references (name, media type, size, sha256), never their
  bytes; no key, header or credential is part of a message (the request's parameters are ``request_sent``'s,
  which never hold one). Instructions of a preset version this store does not hold are said to be missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.provider.calls import takes_prefill
from engine.provider.preset_request import AppliedPreset, with_instructions
from ledger.continuation_history import request_history
from ledger.events import AnyEvent, Attachment, Param, RequestSent, Started, StepStarted, ToolPart
from ledger.history import HistoryEntry, as_messages, attempt_entries
from ledger.reducer import reduce
from ledger.state import EMPTY_STATE, ConversationState

Instructions = Callable[[str, int], str | None]  # (preset id, version) -> its instructions, None when not stored


@dataclass(frozen=True, slots=True)
class SentMessage:
    role: str
    text: str
    references: tuple[str, ...] = ()  # files and binary parts, by name and sha256
    tool_calls: tuple[str, ...] = ()  # name(arguments) of each call an assistant message carries
    tool_call_id: str | None = None


@dataclass(frozen=True, slots=True)
class SentRequest:
    request_id: str
    step: int
    ts: str
    model: str
    params: tuple[Param, ...]
    messages: tuple[SentMessage, ...]
    preset: tuple[str, int] | None = None
    instructions_missing: bool = False


def requests_seen(
    events: Iterable[AnyEvent], attempt_id: str, instructions: Instructions, tool_result_chars: int
) -> list[SentRequest]:
    """Every request of ``attempt_id`` in order, each with the messages it sent."""
    state, out = EMPTY_STATE, []
    preset: AppliedPreset | None = None
    missing, step, messages = False, 0, tuple[SentMessage, ...]()
    for event in events:
        if getattr(event, "attempt_id", None) == attempt_id:
            if isinstance(event, Started) and event.preset_id is not None:
                version = event.preset_version or 1
                told = instructions(event.preset_id, version)
                missing = told is None
                preset = AppliedPreset(preset_id=event.preset_id, version=version, instructions=told or "")
            elif isinstance(event, StepStarted):
                step = event.step
                messages = _messages(state.conversations.get(event.conversation_id), attempt_id, step, preset,
                                     tool_result_chars)  # fmt: skip
            elif isinstance(event, RequestSent):
                out.append(
                    SentRequest(
                        request_id=event.request_id,
                        step=step,
                        ts=event.ts,
                        model=event.model,
                        params=event.params,
                        messages=messages,
                        preset=preset.key if preset else None,
                        instructions_missing=missing,
                    )  # fmt: skip
                )
        state = reduce(state, event)
    return out


def _messages(
    conv: ConversationState | None, attempt_id: str, step: int, preset: AppliedPreset | None, limit: int
) -> tuple[SentMessage, ...]:
    if conv is None or attempt_id not in conv.attempts:
        return ()
    attempt = conv.attempts[attempt_id]
    entries = list(request_history(conv, attempt_id, prefill=takes_prefill(attempt.model), tool_result_chars=limit))
    if step > 1:
        entries += attempt_entries(attempt, limit)
    plain = with_instructions(as_messages(tuple(entries)), preset)
    offset = len(plain) - len(entries)  # the instructions, when there are any
    return tuple(_sent(message, entries[i - offset] if i >= offset else None) for i, message in enumerate(plain))


def _sent(message: dict[str, object], entry: HistoryEntry | None) -> SentMessage:
    references: list[str] = []
    if entry is not None:
        references += [_file(a) for a in entry.attachments]
        references += [_part(p) for p in entry.parts if p.sha256 is not None]
    calls = tuple(f"{c.name}({c.arguments})" for c in entry.tool_calls) if entry is not None else ()
    return SentMessage(
        role=str(message.get("role")),
        text=str(message.get("content") or ""),
        references=tuple(references),
        tool_calls=calls,
        tool_call_id=entry.tool_call_id if entry is not None else None,
    )


def _file(a: Attachment) -> str:
    return f"{a.name} ({a.media_type}, {a.size:,} bytes) sha256:{a.sha256}"


def _part(p: ToolPart) -> str:
    return f"{p.kind} {p.name or ''} ({p.media_type or 'unknown type'}, {p.size:,} bytes) sha256:{p.sha256}"
