"""What the pages share in one process: the engine, the configuration, start-up problems.

Guarantees: pages never touch TinyDB or litellm; they read ``engine.state`` and call engine operations only.
``CONTEXT`` is set once by ``ui.app.build`` and filled at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.config import AppConfig
from engine.engine import Engine


@dataclass
class AppContext:
    config: AppConfig
    model_label: str
    engine: Engine | None = None
    problems: list[str] = field(default_factory=list)

    def require_engine(self) -> Engine:
        if self.engine is None:
            raise RuntimeError("the engine is not started yet")
        return self.engine


CONTEXT: AppContext | None = None


def context() -> AppContext:
    if CONTEXT is None:
        raise RuntimeError("ui.app.build() was not called")
    return CONTEXT
