"""Engine settings: the model, timeouts, re-send policy, input limits, leave policy, and how tasks start.

Guarantees: values are validated when built (``validate`` raises ``ValueError`` naming the setting), and
``spawn`` is the single way the engine starts background work (the app passes NiceGUI's
``background_tasks.create``; tests and the CLI use plain asyncio).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.provider import ProviderConfig

Spawner = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]


def _asyncio_spawn(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    provider: ProviderConfig
    first_chunk_timeout: float = 60.0
    idle_timeout: float = 30.0
    max_resends: int = 2
    resend_backoff: float = 0.5
    max_input_chars: int = 32_000
    leave_policy: Literal["continue", "cancel"] = "continue"
    spawn: Spawner = field(default=_asyncio_spawn, repr=False)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        if not self.provider.model.strip():
            raise ValueError("--model must not be empty")
        for name in ("first_chunk_timeout", "idle_timeout"):
            if getattr(self, name) <= 0:
                raise ValueError(f"--{name.replace('_', '-')} must be more than 0 seconds")
        if not 0 <= self.max_resends <= 5:
            raise ValueError("--max-resends must be between 0 and 5")
        if self.max_input_chars < 1:
            raise ValueError("--max-input-chars must be at least 1")
        if self.leave_policy not in ("continue", "cancel"):
            raise ValueError(f"--leave-policy must be 'continue' or 'cancel', not {self.leave_policy!r}")
