#!/usr/bin/env python3
"""Ledger Chat: a browser chat workbench whose streams can be trusted. This file only hands the command line on.

    python main.py                       # the app with the offline demo model on http://127.0.0.1:8080
    python main.py --model openai/gpt-4o-mini   # a real model (OPENAI_API_KEY from the environment)
    python main.py export [--data-dir DIR | --database-url URL] [--conversation ID] > ledger.jsonl
    python main.py migrate --from-data-dir DIR --database-url URL   # copy a TinyDB ledger into PostgreSQL

Every option also reads a LEDGERCHAT_* environment variable (see ``python main.py --help``). What runs is in
``app/``: the options (``app.config``), the commands (``app.cli``, ``app.commands``) and the wiring
(``app.wiring``). litellm is told to stay offline before anything imports it.
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from app.cli import main  # noqa: E402

if __name__ in {"__main__", "__mp_main__"}:
    code = main()
    if code:
        sys.exit(code)
