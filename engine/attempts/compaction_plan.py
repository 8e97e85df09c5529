"""Where a compaction cuts, and whether an answer needs one first (``ledger.compaction`` decides the rules).

Guarantees:
- ``before_answer``: when the model's window is known (``engine.provider.context``) and the history an answer would send
  does not fit it, the chain key its compaction's summary reaches; None when it fits, the window is unknown or
  nothing can be summarized (the answer then starts as it is, and may fail as too long).
- ``plan`` (see ``before_answer``; ``forced=False``: the Compact button, Compact and retry): the oldest whole turns
  of the branch after the summary that applies already (that summary goes into the new one), so that the newest
  turns kept whole, the message being answered and a reserve for the summary fit ``KEEP`` of the window; a
  running turn is never part of it. The Compact button keeps the newest turn.
- ``meter``: how full the next request of the shown branch is, an agent preset's instructions included.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.provider import Meter, ProviderConfig, count, measure, window_of
from engine.turns import EngineSettings
from ledger.compaction import Chain, chain_key, choose_cut, cut_points, effective
from ledger.events import Retrying, Started, Submitted
from ledger.history import HistoryEntry, chain_history, model_history
from ledger.state import ConversationState
from ledger.tree import chain_before, selected_path

KEEP = 0.5  # the kept turns, the message answered and the summary's reserve fill at most this share of the window
RESERVE = 0.1  # of the window, kept for the summary itself


class Planner:
    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings

    async def meter(self, conv: ConversationState, model: str, instructions: str = "") -> Meter:
        history = model_history(conv, tool_result_chars=self.settings.limits.tool_result_chars)
        return await measure(history, model, self.settings.files.read, instructions)

    async def before_answer(
        self, conv: ConversationState, first: Submitted | Retrying, started: Started, provider: ProviderConfig
    ) -> str | None:
        chain, new = self.before(conv, first, started.message_id)
        told = provider.preset.instructions if provider.preset is not None else ""  # sent first, always
        return await self.plan(conv, chain, new, started.model, forced=True, told=told)

    def before(
        self, conv: ConversationState, first: Submitted | Retrying | None, answer_id: str
    ) -> tuple[Chain, tuple[HistoryEntry, ...]]:
        """The chain before the message to be answered, and that message's own entry (always kept)."""
        limit = self.settings.limits.tool_result_chars
        if isinstance(first, Submitted):
            if first.edit_of:
                chain = chain_before(conv, first.edit_of)
            else:
                chain = [(m, conv.messages[m].selected_attempt_id) for m in selected_path(conv)]
            user = HistoryEntry(role="user", content=first.text, message_id=first.message_id,
                                attachments=first.attachments)  # fmt: skip
            return chain, (user,)
        full = chain_before(conv, answer_id)
        return full[:-1], chain_history(conv, full[-1:], limit, compacted=False)

    async def plan(
        self,
        conv: ConversationState,
        chain: Chain,
        new: Sequence[HistoryEntry],
        model: str,
        *,
        forced: bool,
        told: str = "",
    ) -> str | None:
        """Where to cut (see the module's guarantees): the chain key the summary reaches, or None."""
        limit, read = self.settings.limits.tool_result_chars, self.settings.files.read
        window = await window_of(model)
        if forced and (
            window is None or await count((*chain_history(conv, chain, limit), *new), model, read, told) <= window
        ):
            return None  # it fits, or the window is unknown: no compaction by itself
        compacted = effective(conv, chain)
        rest = chain[compacted[0] if compacted else 0 :]
        bounds = [0, *cut_points(conv, rest), len(rest)] if rest else []
        groups = [rest[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
        if not groups or (not new and len(groups) < 2):
            return None  # nothing before the turn to keep
        costs = [await count(chain_history(conv, g, limit, compacted=False), model, read) for g in groups]
        fixed = await count(new, model, read, told)  # the instructions and the turn being answered are always sent
        if window is None:  # the provider said too long (Compact and retry), or the Compact button
            cut = len(groups) if new else len(groups) - 1
        else:
            cut = choose_cut(costs, fixed + int(window * RESERVE), int(window * KEEP))
        if not new:
            cut = min(cut, len(groups) - 1)  # the Compact button keeps the newest turn
        covered = (compacted[0] if compacted else 0) + sum(len(g) for g in groups[:cut])
        return chain_key(*chain[covered - 1])
