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
        check_limits(
            model=self.provider.model,
            first_chunk_timeout=self.first_chunk_timeout,
            idle_timeout=self.idle_timeout,
            max_resends=self.max_resends,
            max_input_chars=self.max_input_chars,
            leave_policy=self.leave_policy,
        )


def check_limits(
    *,
    model: str,
    first_chunk_timeout: float,
    idle_timeout: float,
    max_resends: int,
    max_input_chars: int,
    leave_policy: str,
) -> None:
    """The bounds of every engine setting, in one place (the command line reports them with the same words)."""
    if not model.strip():
        raise ValueError("--model: must not be empty")
    for name, value in (("first-chunk-timeout", first_chunk_timeout), ("idle-timeout", idle_timeout)):
        if value <= 0:
            raise ValueError(f"--{name}: must be more than 0 seconds")
    if not 0 <= max_resends <= 5:
        raise ValueError(f"--max-resends: {max_resends} must be between 0 and 5")
    if max_input_chars < 1:
        raise ValueError("--max-input-chars: must be at least 1")
    if leave_policy not in ("continue", "cancel"):
        raise ValueError(f"--leave-policy: {leave_policy!r} must be 'continue' or 'cancel'")
