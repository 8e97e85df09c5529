"""The loop guard: a model that asks for the same tool with the same arguments again and again is stopped.

Guarantees:
- ``LoopGuard.check`` reads a finished step's calls in order, after the calls of the attempt's earlier steps: the
  same tool with the same arguments (compared as JSON, key order and spacing aside) ``repeats`` times in a row
  trips it, whether the calls came one a step or several in one step; a call with other arguments or another tool
  starts the count again. ``repeats`` 0 turns the guard off.
- Once tripped, the step's calls run nothing (``engine.turns.turn`` answers each with ``not_run``) and the attempt ends
  failed with error_type ``tool_loop`` and a sentence naming the tool and the count; the step limit
  (``step_limit``) is a separate end with its own sentence.
- Pure bookkeeping: no I/O, no clock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["LoopGuard", "Tripped"]


@dataclass(frozen=True, slots=True)
class Tripped:
    """The guard tripped on ``name`` called ``times`` times in a row with the same arguments."""

    name: str
    times: int

    @property
    def summary(self) -> str:
        return (
            f"The model called {self.name} {self.times} times in a row with the same arguments; "
            "the loop guard stopped the turn."
        )

    @property
    def not_run(self) -> str:
        return f"Not run: the loop guard stopped the turn ({self.name} {self.times} times in a row, same arguments)."


class LoopGuard:
    """Counts identical calls in a row across an attempt's steps (see the module)."""

    __slots__ = ("_last", "_streak", "repeats")

    def __init__(self, repeats: int) -> None:
        self.repeats = repeats
        self._last: tuple[str, str] | None = None
        self._streak = 0

    def check(self, calls: Iterable[tuple[str, str]]) -> Tripped | None:
        """Count a step's ``(name, arguments)`` calls; the trip, if one of them reached ``repeats`` in a row."""
        tripped: Tripped | None = None
        for name, arguments in calls:
            key = (name, _canonical(arguments))
            self._streak = self._streak + 1 if key == self._last else 1
            self._last = key
            if self.repeats and self._streak >= self.repeats and tripped is None:
                tripped = Tripped(name, self._streak)
        return tripped


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    except ValueError:
        return arguments.strip()
