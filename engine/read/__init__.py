"""The read side: the engine's view of the ledger and the only place its state changes (``ReadSide``: append,
absorb, load, search, export), always ``replay`` of the stored events of the conversations it holds.
"""

from __future__ import annotations

from engine.read.side import Listener, ReadSide

__all__ = ["Listener", "ReadSide"]
