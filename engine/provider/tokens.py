"""Local token estimates for when the provider sent no usage (always the case for a cancelled stream).

Guarantees: never raises and never reaches the network (litellm's bundled tokenizer, else ~4 chars a token).
An inline image is handed to litellm cut to the header it reads for the image's size (``IMAGE_HEADER``): the same
count, without walking megabytes of base64 on the event loop (a 10 MB image took 0.4 s; cut, under 1 ms).

``count_messages`` gives what litellm's ``token_counter`` gives for the whole list, without tokenizing a long
history again on every request: litellm counts messages one by one plus a fixed number for the list as a whole,
so each message's count is kept (``COUNTED`` of them, by model and a 16-byte digest of the message: a bounded
cache of small entries, safe across threads) and the list's share (``_shared``: ``count([a]) + count([b]) -
count([a, b])`` for the model, asked of litellm once) is taken away for each message after the first. A request's
count then costs the new messages only (tests/engine/test_token_counts.py holds it equal to litellm's whole count).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from typing import Any

import orjson

from engine.offline import litellm

log = logging.getLogger("ledger_chat.tokens")
IMAGE_HEADER = 65_536  # base64 characters of an inline image litellm reads to size it (its own limit)
COUNTED = 200_000  # messages whose counts are kept (by model and a digest of content), least recently used dropped
SMALL = 4  # lists this short are counted whole
_counts: OrderedDict[tuple[str, bytes], int] = OrderedDict()
_shared: dict[str, int] = {}
_lock = threading.Lock()


def count_text(model: str, text: str) -> int:
    if not text:
        return 0
    try:
        return int(litellm().token_counter(model=model, text=text))
    except Exception:  # noqa: BLE001 - an estimate must never break finalization
        log.debug("token_counter failed for %s; using the 4-chars rule", model, exc_info=True)
        return max(1, len(text) // 4)


def count_messages(model: str, messages: list[dict[str, Any]]) -> int:
    if not messages:
        return 0
    sized = [_sized(m) for m in messages]
    try:
        if len(sized) <= SMALL:
            return int(litellm().token_counter(model=model, messages=sized))
        return sum(_one(model, m) for m in sized) - _share(model) * (len(sized) - 1)
    except Exception:  # noqa: BLE001
        return sum(max(1, len(str(m.get("content") or "")) // 4) + 4 for m in sized)


def _one(model: str, message: dict[str, Any]) -> int:
    """litellm's count of the list holding only ``message``, kept for the next request."""
    content = orjson.dumps(message, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    key = (model, hashlib.blake2b(content, digest_size=16).digest())
    with _lock:
        known = _counts.get(key)
        if known is not None:
            _counts.move_to_end(key)
            return known
    counted = int(litellm().token_counter(model=model, messages=[message]))
    with _lock:
        _counts[key] = counted
        if len(_counts) > COUNTED:
            _counts.popitem(last=False)
    return counted


def _share(model: str) -> int:
    """What litellm adds once per list (the reply's priming) for this model, asked of it once."""
    shared = _shared.get(model)
    if shared is None:
        one, other = {"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}
        counter = litellm().token_counter
        both = counter(model=model, messages=[one, other])
        shared = _shared[model] = int(
            counter(model=model, messages=[one]) + counter(model=model, messages=[other]) - both
        )
    return shared


def _sized(message: dict[str, Any]) -> dict[str, Any]:
    """The message with each inline (``data:``) image cut to what litellm reads of it; others as they are."""
    content = message.get("content")
    if not isinstance(content, list) or not any(_inline_image(p) for p in content):
        return message
    parts = [
        {**p, "image_url": {**p["image_url"], "url": _header(p["image_url"]["url"])}} if _inline_image(p) else p
        for p in content
    ]
    return {**message, "content": parts}


def _header(url: str) -> str:
    """``data:...;base64,`` and the first ``IMAGE_HEADER`` characters of the payload (a multiple of 4: it decodes)."""
    prefix, _, payload = url.partition(",")
    return f"{prefix},{payload[:IMAGE_HEADER]}"


def _inline_image(part: object) -> bool:
    if not isinstance(part, dict) or part.get("type") != "image_url" or not isinstance(part.get("image_url"), dict):
        return False
    url = part["image_url"].get("url")
    return isinstance(url, str) and url.startswith("data:") and len(url) > IMAGE_HEADER + 64


def warm_up(model: str) -> None:
    """Load the tokenizer once (about 0.5 s) so the first Stop does not pay for it."""
    count_text(model, "warm up")
