"""Files people attach to messages: taken in (sniffed, limited, cleaned of metadata, stored by content), read back,
shown as thumbnails, and turned into the content parts a model takes.

Guarantees: see ``engine.files.service`` (``Files``, ``FileLimits``), ``engine.files.sniff``,
``engine.files.images``; importing the package imports Pillow but neither litellm nor a store back end.
"""

from __future__ import annotations

from engine.files import models
from engine.files.admit import Attached, admit, kept
from engine.files.collect import named_by, referenced_by, unreferenced
from engine.files.content import Delivery, Read, delivery, messages_async
from engine.files.decoding import GATE
from engine.files.fetched import from_prompt, from_resource
from engine.files.images import retouch
from engine.files.service import FileLimits, Files, clean_name, megabytes
from engine.files.sniff import AUDIO, RASTER, signature

__all__ = [
    "AUDIO",
    "Attached",
    "Delivery",
    "FileLimits",
    "Files",
    "GATE",
    "RASTER",
    "Read",
    "admit",
    "clean_name",
    "delivery",
    "from_prompt",
    "from_resource",
    "kept",
    "megabytes",
    "messages_async",
    "models",
    "named_by",
    "referenced_by",
    "retouch",
    "signature",
    "unreferenced",
]
