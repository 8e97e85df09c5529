"""The demo model's HTTP endpoint (``DemoModel``): the OpenAI-compatible server the app mounts at ``/demo``, and
the scripted upstream the tests drive, in any wire dialect (``demo.dialects``), with fault tags.

Guarantees: it is reached only over HTTP, like any provider; it imports nothing of the app.
"""

from __future__ import annotations

from demo.server.endpoint import DemoModel

__all__ = ["DemoModel"]
