#!/usr/bin/env python3
"""Ledger Chat: a browser chat workbench whose streams can be trusted.

    python main.py                       # the app with the offline demo model on http://127.0.0.1:8080
    python main.py --model openai/gpt-4o-mini   # a real model (OPENAI_API_KEY from the environment)
    python main.py export [--data-dir DIR] [--conversation ID] > ledger.jsonl

Every option also reads a LEDGERCHAT_* environment variable (see ``python main.py --help``).
"""

from __future__ import annotations

import logging
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from engine.config import AppConfig, ConfigError, load_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    simulated = os.environ.get("NICEGUI_USER_SIMULATION") == "true"
    args = [] if simulated else (sys.argv[1:] if argv is None else argv)
    try:
        config = load_config(args, os.environ)
        if config.command == "export":
            return export(config)
        if not config.is_demo and not simulated:
            check_model(config)
    except ConfigError as exc:
        print(f"ledger-chat: {exc}", file=sys.stderr)
        return 2
    run(config)
    return 0


def run(config: AppConfig) -> None:
    from nicegui import ui

    from ui.app import build

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    build(config)
    print(f"Ledger Chat on http://{config.host}:{config.port} — model: {config.model} — data: {config.data_dir}")
    ui.run(
        host=config.host,
        port=config.port,
        title="Ledger Chat",
        favicon="📒",
        reload=False,
        show=config.show,
        reconnect_timeout=3.0,
        show_welcome_message=False,
    )


def export(config: AppConfig) -> int:
    from ledger.codec import to_jsonl
    from ledger.store import Store

    store = Store.open(config.data_dir, read_only=True)
    for problem in store.problems:
        print(f"ledger-chat: {problem}", file=sys.stderr)
    if config.conversation:
        if config.conversation not in store.conversation_ids():
            print(f"ledger-chat: no conversation {config.conversation} in {config.data_dir}", file=sys.stderr)
            return 1
        events = list(store.events(config.conversation))
    else:
        events = store.all_events()
    sys.stdout.writelines(to_jsonl(events))
    return 0


def check_model(config: AppConfig) -> None:
    """Refuse to start with a model litellm cannot route, or without the provider's key."""
    from engine.offline import litellm

    ll = litellm()
    try:
        ll.get_llm_provider(config.model, api_base=config.api_base)
    except Exception:  # noqa: BLE001 - litellm raises several types here
        raise ConfigError(
            f"--model: {config.model!r} is not a model litellm can route; "
            "use a provider prefix such as 'openai/gpt-4o-mini'"
        ) from None
    if config.api_base:
        return
    env = ll.validate_environment(model=config.model)
    missing = env.get("missing_keys") or []
    if missing:
        raise ConfigError(f"--model: {config.model} needs {', '.join(missing)} in the environment")


if __name__ in {"__main__", "__mp_main__"}:
    code = main()
    if code:
        sys.exit(code)
