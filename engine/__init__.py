"""The engine: everything between a person's command and the ledger, by job, each sub-package with its own face.

Arrows inside point one way, from the commands down: ``commands`` (what pages call) → ``policies`` (what follows an
attempt's end) → ``attempts`` (the one door in and out) → ``turns`` (one attempt's run) → ``provider`` (the model
calls) → ``files`` → ``tools`` (the MCP client) → the basics beside this file (``offline``, ``stamps``, ``text``,
``redaction``, and ``people``: team mode's accounts, sessions and who is acting); ``read`` (the read side) sits
under ``attempts``; ``spend`` (what each person spent, folded from the ledger, and their limits) sits under
``attempts`` and ``turns``, above ``provider``; ``telemetry`` reads the commands' engine.
No sub-package imports one above it, and nothing here imports the pages or the app.
"""

__all__ = [
    "attempts",
    "commands",
    "files",
    "offline",
    "people",
    "policies",
    "provider",
    "read",
    "redaction",
    "spend",
    "stamps",
    "telemetry",
    "text",
    "tools",
    "turns",
]
