"""The app's wiring and its commands: configuration, the store chosen, the engine, the pages and the front door
put together (``app.wiring``), the server run (``app.serve``), the ``export`` and ``migrate`` commands
(``app.commands``), the model check (``app.providers``), the opt-in probes (``app.probes``) and the process's
memory policy (``app.memory``). ``main.py`` only hands the command line to ``app.cli.main``.

Arrows: ``app`` imports every layer (``ui``, ``engine``, ``store``, ``ledger``, ``demo``); nothing imports ``app``.
"""

__all__ = [
    "claims",
    "cli",
    "cluster",
    "commands",
    "config",
    "memory",
    "options",
    "peer_requests",
    "probes",
    "providers",
    "proxy_config",
    "serve",
    "stores",
    "telemetry",
    "telemetry_config",
    "wiring",
]
