"""Ledger Chat's domain: frozen events that carry their own flags, the pure reducer and the decisions, and every
projection of the ledger (the conversation tree, history, listing, search, audit, traces, titles, compaction, share
links).

Guarantees: pure: it imports nothing above it (no store, engine, ui, app), no I/O, no clock, no threads, no
NiceGUI, litellm or httpx (tests/app/test_architecture.py); ``__all__`` names its modules.
"""

__all__ = [
    "bounds",
    "codec",
    "compaction",
    "continuation",
    "continuation_history",
    "decide",
    "ends",
    "errors",
    "events",
    "folds",
    "history",
    "listing",
    "pieces",
    "presets",
    "queue",
    "reduce_agent",
    "reduce_approval",
    "reduce_messages",
    "reduce_stream",
    "reducer",
    "search",
    "share_view",
    "shares",
    "side_starts",
    "stale",
    "state",
    "summary",
    "titles",
    "tree",
    "updates",
    "usage",
]
