"""Ledger Chat's domain and storage: events, the pure reducer, projections and the TinyDB store.

This package imports neither NiceGUI nor litellm (docs/architecture.md).
"""
