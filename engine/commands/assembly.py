"""``build_engine``: the one place an ``Engine`` is made, each part from those made before it.

Guarantees: nothing is filled in after construction and no part holds a reference back to one made after it: the
read side, the runtimes, the compaction planner and the after-end policies (``engine.policies.declared``, in
their declared order) come first; the door (``engine.attempts.Attempts``) is made from them and the other
instances (``peers``: ``ALONE`` for one process alone, the cluster ``app`` wires for several); every command
object is made from the door. A policy is handed the door when it reacts, never holding it. Every task the
engine spawns acts for nobody (``engine.people.for_nobody``): only a person's own command names them. The spend
guard (``engine.spend``) is made here over the read side's state and the settings' limits. ``order`` may
rearrange or extend the declared reactions (tests add their own around them).
litellm's import starts here (4-7 s once per process, on a thread): a turn awaits it before its timeouts start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.attempts import ALONE, Attempts, Peers, Planner, Policy, Runtimes
from engine.commands.compacting import Compactor
from engine.commands.continuing import Continuing
from engine.commands.engine import Engine, Parts, require_saving
from engine.commands.presence import Presence
from engine.commands.presets import Presets
from engine.commands.queue import MessageQueue
from engine.offline import start_import
from engine.people import for_nobody
from engine.policies import Declared, declared
from engine.read import ReadSide
from engine.spend import SpendGuard, UsageBook
from engine.tools import ServerHealth, ToolHub
from engine.turns import EngineSettings
from store.api import EventStore

Order = Callable[[Declared], tuple[Policy, ...]]


def build_engine(
    store: EventStore, settings: EngineSettings, tools: ToolHub | None = None, *, peers: Peers = ALONE,
    order: Order | None = None,
) -> Engine:  # fmt: skip
    start_import()
    read = ReadSide(store)
    spend = SpendGuard(UsageBook(store, lambda: read.state), settings.spend_limits, settings.spend_limit)
    settings = replace(settings, spawn=for_nobody(settings.spawn), spend=spend)  # what it starts is no one's command
    runtimes, planner, policies = Runtimes(), Planner(settings), declared()
    follows, _, titles, _ = policies
    reactions: tuple[Policy, ...] = order(policies) if order is not None else policies
    door = Attempts(read, settings, tools, runtimes, peers, planner, reactions, follows)

    def health() -> tuple[ServerHealth, ...]:  # the tool servers, for the presets' tool lists
        return tools.health() if tools is not None else ()

    presets = Presets(settings.presets, settings.provider_for, lambda: settings.models, health)
    parts = Parts(
        store=store, settings=settings, tools=tools, read=read, door=door, presets=presets, presence=Presence(door),
        queued=MessageQueue(door), compactor=Compactor(door, planner),
        continuing=Continuing(door, presets, lambda reason: require_saving(store, reason)), titles=titles,
    )  # fmt: skip
    return Engine(parts)
