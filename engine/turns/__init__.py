"""One attempt's run, from ``started`` to ``persisted``: its owner (``AttemptWorker``, the one cancel entry and the
one end), its record (``AttemptRun``: the chunk gate, the stale rule, tool calls assembled), the turn's steps
and re-sends, its tool calls run with their one honest result, its questions and approvals, and the engine's
settings (``EngineSettings``, ``Limits``). ``recover`` ends what a dead process left live.

Guarantees: every event of a run carries its ids and goes through the narrow ``append`` it was given; only
``AttemptWorker._end`` and ``recover`` write an attempt's end.
"""

from __future__ import annotations

from engine.turns.attempt import AttemptRun
from engine.turns.lock import ChatLock
from engine.turns.questions import answer_question, decline_unasked
from engine.turns.settings import EngineSettings, Limits
from engine.turns.worker import AttemptWorker, Workplace, recover

__all__ = [
    "AttemptRun",
    "AttemptWorker",
    "ChatLock",
    "EngineSettings",
    "Limits",
    "Workplace",
    "answer_question",
    "decline_unasked",
    "recover",
]
