"""The editors' front door: Ledger Chat as an Agent Client Protocol agent (``main.py acp``), beside the web pages
(``ui``), on the same engine and ledger.

Guarantees: it depends on ``engine`` and ``ledger`` (and the ``agent-client-protocol`` SDK) and nothing below
imports it; it never touches a store, litellm or NiceGUI. A session is a conversation; what the editor is shown is
projected from the ledger (``editor.projection``, pure) and every Stop goes through the engine's one cancel path
(source ``acp``). Modules: ``agent`` (the protocol's methods), ``turn`` (one prompt), ``projection`` (events to
updates), ``replay`` (a loaded session's history), ``words`` (prompts and stop reasons), ``choices`` (a session's
preset and model, its commands), ``servers`` (the MCP servers a session brings), ``questions`` (a tool's
questions), ``serve`` (one connection).
"""

from __future__ import annotations

from editor.agent import LedgerAgent
from editor.projection import Sent, Update, project
from editor.replay import replayed
from editor.serve import protocol_streams, serve
from editor.words import prompt_text, stop_reason

__all__ = ["LedgerAgent", "Sent", "Update", "project", "prompt_text", "protocol_streams", "replayed", "serve",
           "stop_reason"]  # fmt: skip
