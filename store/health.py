"""What the store reports about itself: whether saving works, and every distinct problem, bounded and counted.

Guarantees:
- ``StoreHealth`` is a frozen snapshot, safe to hand to any thread or page: ``saving_fails`` is the readable
  reason while the last write failed (``None`` once a write succeeds again), ``unsaved`` the events held only in
  memory, ``unreachable`` why new writes cannot start (a shared database does not answer: nothing written is lost,
  and it clears by itself once the database answers), ``problems`` every distinct problem still relevant (damage
  found when opening, the live saving failure).
- ``Reach`` says once that the back end does not answer and once that it answers again (thread-safe).
- ``ProblemLog`` keeps one entry per distinct problem (same key), counting repeats instead of adding lines, and at
  most ``MAX_PROBLEMS`` entries; it writes one log line when a problem first appears, never one per repeat, and
  one when a saving failure clears. It is thread-safe.
- ``describe_os_error`` turns an ``OSError`` into words a user can act on ("the disk is full"), keeping the
  system's own text and the path.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

MAX_PROBLEMS = 50
ProblemKind = Literal["opening", "saving", "fenced", "unreachable"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One distinct problem: ``opening`` (found in the files at start-up) or ``saving`` (live, clears itself)."""

    key: str
    kind: ProblemKind
    message: str
    count: int = 1


@dataclass(frozen=True, slots=True)
class StoreHealth:
    saving_fails: str | None = None
    unsaved: int = 0
    failed_tries: int = 0
    problems: tuple[Problem, ...] = ()
    unreachable: str | None = None

    @property
    def ok(self) -> bool:
        return self.saving_fails is None


class ProblemLog:
    """Distinct problems with a count each; one log line per distinct problem."""

    def __init__(self, logger: logging.Logger) -> None:
        self._log = logger
        self._lock = threading.Lock()
        self._entries: dict[str, Problem] = {}
        self._dropped = 0

    def report(self, key: str, message: str, *, kind: ProblemKind = "opening") -> Problem | None:
        """Add a problem, or count a repeat of one already listed (its message is updated, nothing is logged)."""
        with self._lock:
            known = self._entries.get(key)
            if known is not None:
                self._entries[key] = replace(known, message=message, count=known.count + 1)
                return self._entries[key]
            if len(self._entries) >= MAX_PROBLEMS:
                self._dropped += 1
                if self._dropped == 1:
                    self._log.error("more than %d distinct problems: later ones are not listed", MAX_PROBLEMS)
                return None
            problem = self._entries[key] = Problem(key=key, kind=kind, message=message)
        (self._log.error if kind == "saving" else self._log.warning)(message)
        return problem

    def clear_saving(self, note: str) -> None:
        """Saving works again: drop the saving problems and say so once."""
        with self._lock:
            saving = [key for key, p in self._entries.items() if p.kind == "saving"]
            for key in saving:
                del self._entries[key]
        if saving:
            self._log.warning(note)

    def forget(self, key: str, note: str) -> None:
        """A problem that is over: drop it and say so once (nothing when it was not listed)."""
        with self._lock:
            known = self._entries.pop(key, None)
        if known is not None:
            self._log.warning(note)

    def problems(self) -> tuple[Problem, ...]:
        with self._lock:
            return tuple(self._entries.values())

    def messages(self) -> list[str]:
        return [p.message for p in self.problems()]


class Reach:
    """Whether the back end answers for new writes: ``failed(reason)`` when it did not, ``works()`` when it did."""

    KEY = "unreachable"

    def __init__(self, problems: ProblemLog) -> None:
        self._problems = problems
        self.reason: str | None = None

    def failed(self, reason: str) -> None:
        self.reason = reason
        message = f"Saving is paused: {reason}. New messages wait until it answers."
        self._problems.report(self.KEY, message, kind="unreachable")

    def retry(self, probe: Callable[[], object]) -> None:
        """While it does not answer: ``probe()``, and if that returns, it works again."""
        if self.reason is not None:
            try:
                probe()
            except Exception:  # noqa: BLE001 - any failure of the probe means: still not
                return
            self.works()

    def works(self) -> None:
        if self.reason is not None:
            self.reason = None
            self._problems.forget(self.KEY, "the database answers again")


_ERRNO_WORDS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the data folder is on a read-only file system",
    errno.EACCES: "there is no permission to write in the data folder",
    errno.EPERM: "there is no permission to write in the data folder",
    errno.ENOENT: "the data folder is gone",
    errno.ENOTDIR: "the data folder is not a folder any more",
    errno.EIO: "the disk reports an input/output error",
}


def describe_os_error(exc: BaseException) -> tuple[str, str]:
    """(a key naming the kind of failure, a readable reason) for an exception raised while writing."""
    if isinstance(exc, OSError) and exc.errno is not None:
        words = _ERRNO_WORDS.get(exc.errno, "the disk refused a write")
        where = f", in {os.path.dirname(os.fsdecode(exc.filename))}" if isinstance(exc.filename, (str, bytes)) else ""
        return f"errno-{exc.errno}", f"{words} ({exc.strerror or exc}{where})"
    return f"error-{type(exc).__name__}", f"a write failed ({type(exc).__name__}: {exc})"
