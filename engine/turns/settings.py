"""Engine settings: the provider, the limits (timeouts, re-sends, input size, leave policy, agent steps and tool
calls), how tasks start, and the files service (``engine.files.Files``: the blob store and the file limits).

Guarantees: ``Limits`` holds the one set of defaults (the command line reads them from here) and validates
itself when built, raising ``ValueError`` whose message starts with the option's name; ``spawn`` is the single
way the engine and the cluster start background work that outlives its caller (the app passes NiceGUI's
``background_tasks.create``; tests and the CLI use plain asyncio). A task an object owns, keeps and cancels
itself (a tool server's session, the hub's restarts, a tool call's deadline, one step's tool calls) is that
object's and never outlives it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.files import Files
from engine.provider import ProviderConfig
from engine.spend import SpendGuard
from store.limits import LimitStore, MemoryLimits, SpendLimit
from store.presets import MemoryPresets, PresetStore

Spawner = Callable[[Coroutine[Any, Any, None], str], "asyncio.Task[None]"]
LeavePolicy = Literal["continue", "cancel"]


def asyncio_spawn(coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
    return asyncio.get_running_loop().create_task(coro, name=name)


@dataclass(frozen=True, kw_only=True)
class Limits:
    """How long to wait, how often to re-send, what input to accept, what leaving a streaming chat does."""

    first_chunk_timeout: float = 60.0
    idle_timeout: float = 30.0
    max_resends: int = 2
    resend_backoff: float = 0.5
    max_input_chars: int = 32_000
    leave_policy: LeavePolicy = "continue"
    max_steps: int = 8
    loop_guard: int = 3  # the same tool with the same arguments this many times in a row ends the turn (0: off)
    tool_grace: float = 3.0
    tool_result_chars: int = 20_000

    def __post_init__(self) -> None:
        for name, value in (("first-chunk-timeout", self.first_chunk_timeout), ("idle-timeout", self.idle_timeout)):
            if not value > 0:
                raise ValueError(f"--{name}: must be more than 0 seconds")
        if not 0 <= self.max_resends <= 5:
            raise ValueError(f"--max-resends: {self.max_resends} must be between 0 and 5")
        if self.resend_backoff < 0:
            raise ValueError("--resend-backoff: must not be negative")
        if self.max_input_chars < 1:
            raise ValueError("--max-input-chars: must be at least 1")
        if self.leave_policy not in ("continue", "cancel"):
            raise ValueError(f"--leave-policy: {self.leave_policy!r} must be 'continue' or 'cancel'")
        if not 1 <= self.max_steps <= 100:
            raise ValueError(f"--max-steps: {self.max_steps} must be between 1 and 100")
        if self.loop_guard != 0 and not 2 <= self.loop_guard <= 100:
            raise ValueError(f"--loop-guard: {self.loop_guard} must be between 2 and 100, or 0 (off)")
        if not 0 <= self.tool_grace <= 60:
            raise ValueError(f"--tool-grace: {self.tool_grace:g} must be between 0 and 60 seconds")
        if self.tool_result_chars < 100:
            raise ValueError("--tool-result-chars: must be at least 100")


@dataclass(frozen=True, kw_only=True)
class EngineSettings:
    """``provider`` is the default model; ``others`` the further models a chat may pick (``--models``); ``files``
    where attached files are kept (default: in memory) and their limits; ``spend_limits`` and ``spend_limit`` the
    spend limits (``engine.spend``: checked by ``spend`` before every model request)."""

    provider: ProviderConfig
    limits: Limits = field(default_factory=Limits)
    spawn: Spawner = field(default=asyncio_spawn, repr=False)
    others: tuple[ProviderConfig, ...] = ()
    files: Files = field(default_factory=Files, repr=False)
    presets: PresetStore = field(default_factory=MemoryPresets, repr=False)  # where agent presets are kept
    titles: bool = False  # the model names each chat after its first answer (``engine.policies.titles``; CLI: --titles)
    spend_limits: LimitStore = field(default_factory=MemoryLimits, repr=False)  # per person (``store.limits``)
    spend_limit: SpendLimit = field(default_factory=SpendLimit)  # everyone's, when the store has no default
    spend: SpendGuard | None = field(default=None, repr=False)  # made by ``build_engine`` from the two above

    def __post_init__(self) -> None:
        if not self.provider.model.strip():
            raise ValueError("--model: must not be empty")

    @property
    def models(self) -> tuple[str, ...]:
        """The model strings a chat may use, the default first (each once)."""
        return tuple(dict.fromkeys(p.model for p in (self.provider, *self.others)))

    def provider_for(self, model: str | None) -> ProviderConfig | None:
        """How to call ``model`` (the default when None); None when it is not one of ``models``."""
        if model is None:
            return self.provider
        return next((p for p in (self.provider, *self.others) if p.model == model), None)
