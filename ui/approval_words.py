"""The words the page shows for approvals: a mode, why a call waits, who answered, a grant.

Guarantees: pure functions of ledger values (``ledger.events.approval``); every mode, reason, decision, scope and
"by" the ledger can record has words here (a value not known reads as itself).
"""

from __future__ import annotations

from ledger.folds import Phase, PhaseKind

APPROVAL_LABELS: dict[PhaseKind, str] = {"approval_asked": "approval asked", "approval_given": "approval given"}
MODE_WORDS = {
    "run": "runs without asking",
    "ask": "asks every time",
    "once": "asks once per chat",
    "never": "never runs",
}
WHY_WORDS = {
    "config_tool": "set for this tool in the tools config",
    "config_server": "set for this server in the tools config",
    "preset_tool": "set for this tool by the preset",
    "preset_server": "set for all tools by the preset",
    "read_only": "the tool says it only reads",
    "destructive": "the tool says it may change or delete things",
    "open_world": "the tool says it reaches the outside world",
    "no_hints": "the tool does not say what it does",
    "chat_grant_void": "the tool changed since you allowed it in this chat",
    "server_grant_void": "the tool changed since you allowed it on this server",
}
BY_WORDS = {
    "user": "by you",
    "grant": "by an earlier “always allow”",
    "policy": "by the policy",
    "stop": "by Stop",
    "restart": "by a restart",
}
SCOPE_WORDS = {"once": "this call", "chat": "in this chat", "server": "on this server"}


def why_words(why: str | None) -> str:
    return WHY_WORDS.get(why or "", why or "")


def approval_detail(p: Phase) -> str:
    """The second line of an approval's timeline entry."""
    grant = f" · grant {p.grant[:12]}" if p.grant else ""
    if p.kind == "approval_asked":
        return f"{p.name}: {MODE_WORDS.get(p.status or '', p.status)} ({why_words(p.source)}){grant}"
    decision = "Run" if p.status == "run" else "Skip"
    scope, by = SCOPE_WORDS.get(p.scope or "", p.scope), BY_WORDS.get(p.source or "", p.source)
    return f"{p.name}: {decision}, {scope}, {by}{grant}"
