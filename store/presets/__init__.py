"""Agent presets beside the ledger (``ledger.presets`` says what a preset is): in memory, in a JSON file in the data
folder, or a PostgreSQL table (``store.postgres``); every version kept, a taken version refused (``VersionTaken``).
"""

from __future__ import annotations

from store.presets.stores import FilePresets, MemoryPresets, PresetStore, VersionTaken

__all__ = ["FilePresets", "MemoryPresets", "PresetStore", "VersionTaken"]
