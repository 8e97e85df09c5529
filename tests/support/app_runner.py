"""Starting the real app (``python main.py``) for tests: one factory behind the ``run_app`` fixture.

Guarantees: ``run_app(*options)`` is a context manager that yields a started ``AppProcess`` (on the scripted
upstream, or with ``demo_model=True`` on the built-in demo model) in a data folder of its own unless ``data`` is
given, and stops it when the block ends, even after a failure (stopping an app the test already stopped or killed
does nothing). ``together`` starts several at once (each start is mostly waiting for imports). Whatever is still
running when the session ends is stopped then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from tests.support.app_process import AppProcess


class AppRunner:
    """Makes and stops app processes; ``folder(name)`` gives each its own temp folder (``data`` inside it)."""

    def __init__(self, folder: Callable[[str], Path], upstream_url: str) -> None:
        self.folder, self.upstream_url = folder, upstream_url
        self.running: list[AppProcess] = []

    def made(
        self,
        *options: str,
        data: Path | None = None,
        demo_model: bool = False,
        host: str | None = None,
        cold: bool = False,
        env: dict[str, str] | None = None,
    ) -> AppProcess:
        """An app process not started yet (``cold``, ``env``: see ``AppProcess``), remembered so that ``stop_all``
        stops it."""
        where = data if data is not None else self.folder("app") / "data"
        upstream = None if demo_model else self.upstream_url
        process = AppProcess(where, upstream, *options, host=host, cold=cold, env=env)
        self.running.append(process)
        return process

    @contextmanager
    def __call__(
        self,
        *options: str,
        data: Path | None = None,
        demo_model: bool = False,
        host: str | None = None,
        timeout: float = 60.0,
    ) -> Iterator[AppProcess]:
        process = self.made(*options, data=data, demo_model=demo_model, host=host)
        try:
            yield process.start(timeout)
        finally:
            self.stop(process)

    @contextmanager
    def together(self, count: int, *options: str, timeout: float = 120.0) -> Iterator[list[AppProcess]]:
        """``count`` apps with the same options, started at the same time, each in its own data folder."""
        processes = [self.made(*options) for _ in range(count)]
        try:
            with ThreadPoolExecutor(count) as starting:
                list(starting.map(lambda process: process.start(timeout), processes))
            yield processes
        finally:
            for process in processes:
                self.stop(process)

    def stop(self, process: AppProcess) -> None:
        process.stop()
        if process in self.running:
            self.running.remove(process)

    def stop_all(self) -> None:
        for process in list(self.running):
            self.stop(process)
