"""Files people attach to messages: taken in (sniffed, limited, cleaned of metadata, stored by content), read back,
shown as thumbnails, and turned into the content parts a model takes.

Guarantees: see ``engine.files.service`` (``Files``, ``FileLimits``), ``engine.files.sniff``,
``engine.files.images``; importing the package imports Pillow but neither litellm nor a store back end.
"""

from engine.files.service import FileLimits, Files, clean_name, megabytes

__all__ = ["FileLimits", "Files", "clean_name", "megabytes"]
