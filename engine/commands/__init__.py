"""The engine's commands, the one face pages, the cluster and the command line use: ``Engine`` (create, rename,
Send, Edit, Retry, Continue, select, branch, Stop, delete, compaction, the queue, viewers, recovery, shutdown),
made only by ``build_engine`` from its parts, the approval grants' views and revokes, an admin's recorded reads,
and share links (``ShareLinks``).

Guarantees: a command decides with ``ledger.decide`` (a refusal raises ``InputRejected`` with a sentence and
appends nothing), starts attempts only through the door (``engine.attempts``) and reads only through the read
side (``engine.read``). Nothing below this package imports it.
"""

from __future__ import annotations

from engine.commands.admin_reads import ChatLine, chats_of, read_as_admin
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine, InputRejected
from engine.commands.grants import GrantView, chat_grants, revoke, server_grants
from engine.commands.shares import NO_SUCH_LINK, Shared, ShareLinks, ShareOptions

__all__ = [
    "NO_SUCH_LINK",
    "ShareLinks",
    "ShareOptions",
    "Shared",
    "ChatLine",
    "Engine",
    "GrantView",
    "InputRejected",
    "build_engine",
    "chat_grants",
    "chats_of",
    "read_as_admin",
    "revoke",
    "server_grants",
]
