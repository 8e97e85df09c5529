"""The approval policy of a tool call: one pure function (``resolve``) says whether it runs, waits for a person,
or is refused, and why; and the one way a tool's grant hash is made (``tool_hash``).

Guarantees:
- Modes (``ledger.events.approval.ApprovalMode``): ``run`` runs without asking, ``ask`` asks every time, ``once``
  asks once per chat (a Run there grants the tool in that chat), ``never`` refuses (the model sees a ``declined``
  result saying the policy forbids it).
- What the config sets (per tool, else ``*``; ``"confirm": true`` means ``{"*": "ask"}``) and what a preset sets
  (``preset``, the same shape; None when there is none) are explicit: when both set one, the stricter wins
  (``never`` > ``ask`` > ``once`` > ``run``). Only when neither sets one does the tool's MCP annotations choose:
  ``readOnlyHint: true`` → run; ``destructiveHint`` or ``openWorldHint`` → ask; no hints → ask. Annotations never
  widen an explicit setting.
- A grant (chat or server) lets an ``ask``/``once`` call run without asking only while its hash equals the tool's
  hash now (name, description, input schema: sha256 of canonical JSON); a grant for another hash is void: the
  call asks, and the reason says which grant no longer fits. Nothing lets a ``never`` call run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ledger.events import ApprovalDecision, ApprovalMode, ApprovalScope, ApprovalWhy

MODES: tuple[ApprovalMode, ...] = get_args(ApprovalMode)
STRICTNESS: dict[ApprovalMode, int] = {"run": 0, "once": 1, "ask": 2, "never": 3}
Action = Literal["run", "ask", "refuse"]


@dataclass(frozen=True, slots=True)
class Grants:
    """The grant hashes held for one tool (None when none), and the tool's hash now."""

    current: str
    chat: str | None = None
    server: str | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """A person's answer to a waiting call: Run or Skip, and how far a Run reaches."""

    decision: ApprovalDecision
    scope: ApprovalScope = "once"


@dataclass(frozen=True, slots=True)
class Policy:
    """What happens to a call: ``action``, under ``mode``, because of ``why``; ``granted`` names the grant that
    let an ``ask``/``once`` call run without asking."""

    action: Action
    mode: ApprovalMode
    why: ApprovalWhy
    granted: ApprovalScope | None = None


def tool_hash(name: str, description: str, schema: Mapping[str, Any]) -> str:
    """sha256 (hex) of the tool's name, description and input schema as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(
        {"name": name, "description": description, "inputSchema": schema},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def resolve(
    tool: str,
    annotations: Mapping[str, Any] | None,
    server: Mapping[str, ApprovalMode],
    preset: Mapping[str, ApprovalMode] | None,
    grants: Grants,
) -> Policy:
    """The policy of one call of ``tool`` (its name on its server); see the module's guarantees."""
    mode, why = _explicit(tool, server, preset) or _from_annotations(annotations or {})
    if mode == "run":
        return Policy("run", mode, why)
    if mode == "never":
        return Policy("refuse", mode, why)
    if grants.server == grants.current:
        return Policy("run", mode, why, granted="server")
    if grants.chat == grants.current:
        return Policy("run", mode, why, granted="chat")
    if grants.chat is not None:
        return Policy("ask", mode, "chat_grant_void")
    if grants.server is not None:
        return Policy("ask", mode, "server_grant_void")
    return Policy("ask", mode, why)


def _explicit(
    tool: str, server: Mapping[str, ApprovalMode], preset: Mapping[str, ApprovalMode] | None
) -> tuple[ApprovalMode, ApprovalWhy] | None:
    found: list[tuple[ApprovalMode, ApprovalWhy]] = []
    sources: tuple[tuple[Mapping[str, ApprovalMode], ApprovalWhy, ApprovalWhy], ...] = (
        (server, "config_tool", "config_server"),
        (preset or {}, "preset_tool", "preset_server"),
    )
    for table, named, star in sources:
        if tool in table:
            found.append((table[tool], named))
        elif "*" in table:
            found.append((table["*"], star))
    return max(found, key=lambda f: STRICTNESS[f[0]]) if found else None


def _from_annotations(annotations: Mapping[str, Any]) -> tuple[ApprovalMode, ApprovalWhy]:
    if annotations.get("readOnlyHint") is True:
        return "run", "read_only"
    if annotations.get("destructiveHint") is True:
        return "ask", "destructive"
    if annotations.get("openWorldHint") is True:
        return "ask", "open_world"
    return "ask", "no_hints"


def parse_modes(value: Any, where: str) -> dict[str, ApprovalMode] | str:
    """An ``approval`` setting (a mode, or tool name or ``*`` → mode) as a table, or one sentence saying what is
    wrong with it."""
    table = {"*": value} if isinstance(value, str) else value
    if not isinstance(table, dict) or not table:
        return f"{where}: 'approval' must be a mode or an object of tool names (or '*') to modes"
    for name, mode in table.items():
        if mode not in MODES:
            return f"{where}: approval for {name!r} must be one of {', '.join(MODES)} (got {mode!r})"
    return dict(table)
