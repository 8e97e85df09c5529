"""The one door in and out of an attempt's life: every attempt (Send, Edit, Retry, a queued message, Continue, a
compaction, a title) starts through ``Attempts.start`` (``begin`` for an answer that may need a compaction first),
and every end reaches ``Attempts.ended``, which clears the runtime's active attempt and runs the after-end
``Policy`` objects in their declared order (``engine.policies``). ``Attempts.cancel`` is the one cancel path's
front door.
"""

from __future__ import annotations

from engine.attempts.compaction_plan import Planner
from engine.attempts.door import Attempts, Ended, Follows, Next, Policy
from engine.attempts.peers import ALONE, LiveElsewhere, Local, Peers
from engine.attempts.runtimes import Runtime, Runtimes

__all__ = [
    "ALONE",
    "Attempts",
    "Ended",
    "Follows",
    "LiveElsewhere",
    "Local",
    "Next",
    "Peers",
    "Planner",
    "Policy",
    "Runtime",
    "Runtimes",
]
