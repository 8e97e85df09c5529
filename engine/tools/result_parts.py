"""A tool's whole result (``ledger.events.values.ToolPart``), as the model's provider takes it through litellm.

Guarantees:
- ``tool_messages`` turns one tool history entry into exactly one ``role: tool`` message for its
  ``tool_call_id``. Its text is the entry's content (the result's text with a description in place of each
  non-text part, capped by ``--tool-result-chars``). For Anthropic (``anthropic/`` models, unless litellm knows
  the model and says it has no vision) the content is a list: that text, then each image as an ``image_url`` part
  (a base64 data URI), which litellm turns into image blocks inside the ``tool_result``
  (``convert_to_anthropic_tool_result``). Every other provider gets the text only: OpenAI's chat completions
  take only text in a tool message.
- ``tool_followups`` gives, for the tool entries of one step, at most ONE ``user`` message carrying their images
  as ``image_url`` parts, for providers that take images only from the user (OpenAI, Gemini, Ollama and the rest)
  and a model litellm says has vision (``litellm.supports_vision``; a model litellm does not know gets none: the
  description in the text is all it gets). The caller appends it after ALL the step's tool messages, never
  between them (every tool_call_id must be answered first). For Anthropic it is empty: the images are in the
  ``tool_result`` already.
- Audio (WAV, MP3) goes in that same user message as ``input_audio`` parts for a model litellm says takes audio
  input (``supports_audio_input``: Gemini's, and any declared with ``--model-info``); Anthropic takes no audio.
- ``history_messages`` is that assembly for a whole history: each tool entry through ``tool_messages``, the
  step's ``tool_followups`` right after its last tool message, every other entry through ``other`` (the caller's
  own, e.g. a user message with its attachments; ``HistoryEntry.as_message`` by default). It asks litellm's model
  map once per history (``senses``), not once per turn: a long chat's request costs no more lookups than a short
  one's.
- Only raster images (PNG, JPEG, GIF, WebP) are ever sent as images; other audio and binary resources are
  described in the text only. ``read`` gives a blob's bytes by sha256; a blob that is gone is described, never
  dropped silently ("no longer available").
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from engine.offline import litellm
from engine.tools.result_content import describe
from ledger.events import ToolPart
from ledger.history import HistoryEntry

__all__ = ["Read", "Senses", "history_messages", "images_in_tool_result", "senses", "tool_followups", "tool_messages"]

Read = Callable[[str], bytes | None]
IMAGES = {"image/png", "image/jpeg", "image/gif", "image/webp"}
#: The audio types OpenAI's ``input_audio`` part names (litellm maps it to Gemini's ``inline_data`` too).
AUDIO = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def images_in_tool_result(model: str) -> bool:
    """Whether this model's provider takes images inside a tool message (through litellm): Anthropic's."""
    return model.startswith("anthropic/") and _vision(model) is not False


@dataclass(frozen=True, slots=True)
class Senses:
    """What the model takes from tool results, as litellm says (looked up once per history, not per turn)."""

    images_in_results: bool  # Anthropic's: images inside the tool message
    vision: bool  # images in a follow-up user message
    hearing: bool  # sounds in a follow-up user message


def senses(model: str) -> Senses:
    in_results = images_in_tool_result(model)
    vision = not in_results and _vision(model) is True
    hearing = not model.startswith("anthropic/") and _knows(model, "supports_audio_input")
    return Senses(in_results, vision, hearing)


def tool_messages(entry: HistoryEntry, model: str, read: Read, known: Senses | None = None) -> list[dict[str, Any]]:
    """The one message for a ``role == "tool"`` entry (see the module's guarantees)."""
    message = entry.as_message()
    if not (known.images_in_results if known is not None else images_in_tool_result(model)):
        return [message]
    images, gone = _images(entry.parts, read)
    if not images:
        return [_with_gone(message, gone)]
    text = _gone_note(entry.content or "", gone)
    message["content"] = [*([{"type": "text", "text": text}] if text else []), *images]
    return [message]


def tool_followups(
    entries: Iterable[HistoryEntry], model: str, read: Read, known: Senses | None = None
) -> list[dict[str, Any]]:
    """At most one user message with the images (and sounds) of one step's tool results (see the guarantees)."""
    entries = tuple(entries)
    if not any(entry.role == "tool" and entry.parts for entry in entries):
        return []
    known = known if known is not None else senses(model)
    vision, hearing = known.vision, known.hearing
    if not (vision or hearing):
        return []
    content: list[dict[str, Any]] = []
    for entry in entries:
        if entry.role != "tool":
            continue
        for part in entry.parts:
            media = (_image(part, read) if vision else None) or (_audio(part, read) if hearing else None)
            if media is not None:
                content += [{"type": "text", "text": f"{describe(part)} from tool call {entry.tool_call_id}:"}, media]
    if not content:
        return []
    lead = "What the tool calls above returned, as the user sees it (the tool results describe it):"
    return [{"role": "user", "content": [{"type": "text", "text": lead}, *content]}]


def history_messages(
    entries: Iterable[HistoryEntry],
    model: str,
    read: Read,
    other: Callable[[HistoryEntry], dict[str, Any]] = HistoryEntry.as_message,
) -> list[dict[str, Any]]:
    """The request's messages for a history (see the module's guarantees)."""
    messages: list[dict[str, Any]] = []
    step: list[HistoryEntry] = []
    known = senses(model)
    for entry in entries:
        if entry.role == "tool":
            messages += tool_messages(entry, model, read, known)
            step.append(entry)
            continue
        if step:
            messages += tool_followups(step, model, read, known)
            step = []
        messages.append(other(entry))
    return messages + tool_followups(step, model, read, known)


def _images(parts: tuple[ToolPart, ...], read: Read) -> tuple[list[dict[str, Any]], int]:
    images, gone = [], 0
    for part in parts:
        if part.kind != "image" or part.media_type not in IMAGES or part.sha256 is None:
            continue
        image = _image(part, read)
        if image is None:
            gone += 1
        else:
            images.append(image)
    return images, gone


def _image(part: ToolPart, read: Read) -> dict[str, Any] | None:
    if part.kind != "image" or part.media_type not in IMAGES or part.sha256 is None:
        return None
    data = read(part.sha256)
    if data is None:
        return None
    uri = f"data:{part.media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": uri}}


def _audio(part: ToolPart, read: Read) -> dict[str, Any] | None:
    fmt = AUDIO.get(part.media_type or "")
    if part.kind != "audio" or fmt is None or part.sha256 is None:
        return None
    data = read(part.sha256)
    if data is None:
        return None
    return {"type": "input_audio", "input_audio": {"data": base64.b64encode(data).decode("ascii"), "format": fmt}}


def _gone_note(text: str, gone: int) -> str:
    if not gone:
        return text
    return f"{text}\n[{gone} image(s) of this result no longer available]".strip()


def _with_gone(message: dict[str, Any], gone: int) -> dict[str, Any]:
    if gone:
        message["content"] = _gone_note(str(message.get("content") or ""), gone)
    return message


def _vision(model: str) -> bool | None:
    """litellm's word on the model's vision: True, False, or None when litellm does not know the model."""
    module = litellm()
    try:
        info = module.get_model_info(model)
    except Exception:  # noqa: BLE001 - litellm raises its own kinds for a model it does not map
        return None
    return bool(info.get("supports_vision"))


def _knows(model: str, feature: str) -> bool:
    """Whether litellm knows the model and says it has ``feature`` (its model map, or ``--model-info``)."""
    try:
        return bool(litellm().get_model_info(model).get(feature))
    except Exception:  # noqa: BLE001 - a model litellm does not map has no feature it can vouch for
        return False
