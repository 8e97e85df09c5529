"""The path a transcript shows, walked again only when what decides it changed: a streaming update never walks it.

Guarantees: ``ShownPath.of(conv)`` is ``with_dividers(conv, selected_path(conv))`` (the selected path with each
compaction after the turn it reaches, ``ui.compaction_view``), and ``place`` a message's index in it, in constant
time. The walk depends only on ``conv.messages`` and ``conv.chosen`` (and on attempts' ``message_id`` and
``purpose``, fixed when an attempt starts, which always makes a new ``messages``): the reducer makes new maps for
every change of them and leaves them as they are for a chunk or any other change of an attempt alone, so the path
is taken again from the last walk while both are the same objects (``tests/ui/test_shown_path.py`` proves it over
random sessions). ``ChatCost`` does the same for the chat's cost in the header: the cost of its attempts changes
only when an attempt's metrics are recorded (``persisted``, which makes a new ``messages``) and once litellm's
price map is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.offline import imported
from engine.provider import Cost, chat_cost
from ledger.state import ConversationState
from ledger.tree import selected_path
from ui.compaction_view import with_dividers

__all__ = ["ChatCost", "ShownPath"]


class ShownPath:
    """One transcript's walk of the path, kept while the maps it was made from are the conversation's."""

    def __init__(self) -> None:
        self._made_from: tuple[Mapping[str, object], Mapping[str, object]] | None = None
        self.whole: tuple[str, ...] = ()
        self.places: dict[str, int] = {}
        self.walks = 0  # how many times the path was walked (tests count them)

    def of(self, conv: ConversationState) -> tuple[str, ...]:
        """The path shown (messages and compaction dividers, in order)."""
        made = self._made_from
        if made is None or made[0] is not conv.messages or made[1] is not conv.chosen:
            self.whole = with_dividers(conv, selected_path(conv))
            self.places = {message_id: at for at, message_id in enumerate(self.whole)}
            self._made_from = (conv.messages, conv.chosen)
            self.walks += 1
        return self.whole

    def place(self, conv: ConversationState, message_id: str | None) -> int | None:
        """Where ``message_id`` is on the path shown (None: not on it)."""
        self.of(conv)
        return self.places.get(message_id) if message_id is not None else None

    def forget(self) -> None:
        self._made_from, self.whole, self.places = None, (), {}


class ChatCost:
    """The chat's cost for the header, priced again only when an attempt's metrics or the price map changed."""

    def __init__(self) -> None:
        self._made_from: tuple[Mapping[str, object], bool] | None = None
        self.cost: Cost | None = None

    def of(self, conv: ConversationState) -> Cost:
        loaded = imported() is not None
        made = self._made_from
        if self.cost is None or made is None or made[0] is not conv.messages or made[1] != loaded:
            self.cost = chat_cost(conv)
            self._made_from = (conv.messages, loaded)
        return self.cost
