"""Run by Python at start-up in an app a test starts with this folder first on ``PYTHONPATH`` (never in the app
itself): litellm's import takes ``LC_TEST_LITELLM_DELAY`` seconds longer, as on a busy machine (issue 41 measured
the first Send waiting 13.5 s), so that a test can act while the model client is still loading. The wait is a
sleep on the importing thread (``engine.offline`` imports on a worker thread) while the module is executed, when
Python holds that module's lock only (not while finding it, under the global import lock): the app serves pages
meanwhile."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType

DELAY = float(os.environ.get("LC_TEST_LITELLM_DELAY", "0") or 0)


class SlowLitellm(MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "litellm":
            return None
        sys.meta_path.remove(self)
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            run = spec.loader.exec_module

            def slowly(module: ModuleType) -> None:
                time.sleep(DELAY)
                run(module)

            spec.loader.exec_module = slowly  # type: ignore[method-assign]  # this one loader only
        return spec


if DELAY > 0:
    sys.meta_path.insert(0, SlowLitellm())
