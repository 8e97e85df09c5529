"""Render time per KB of each pathological family at 5k, 20k and 100k characters, against the renderer before
markdown-it in the same run (issue 42 item 1; not a test).

    .venv/bin/python -m bench.render_bench [--base REV] [--sizes 5000 20000 100000] [--old-timeout 8]

Times are CPU seconds of the rendering thread (``time.thread_time``: other processes on a shared machine do not
count), in ms per 1,000 characters. This tree's ``render_fresh`` (a finished block, no cache) and ``render_tail``
(the growing tail) are timed in this process, the best of ``--repeat``; the base's ``ui.markdown.safe._render``
(default: the parent of the commit that added ``ui/markdown/engine.py``, the markdown2 renderer) is loaded from
``git show`` into a temporary package and timed in a forked child killed after ``--old-timeout`` seconds (shown
``> N s``; an exception is shown by name: ``RecursionError`` is what made a chat answer 500). Flat columns for
this tree mean cost linear in the text.
"""

from __future__ import annotations

import argparse
import importlib
import multiprocessing
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.ui.test_render_bounds import FAMILIES
from ui.markdown.safe import render_fresh
from ui.markdown.tail import render_tail

ROOT = Path(__file__).resolve().parent.parent
OLD_MODULES = ("safe_markdown", "math_markdown", "closing", "tail_render")
SHOWN = (
    "open links", "backticks", "deep quote", "deep list", "brackets", "images", "nested stars", "display math",
    "ticks and pairs", "table pipes", "stars", "dollars",
)  # fmt: skip


def default_base() -> str:
    added = subprocess.run(
        ["git", "log", "--diff-filter=A", "--format=%H", "--", "ui/markdown/engine.py"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return f"{added[-1]}^" if added else "HEAD"


def load_old(base: str) -> Callable[[str], str]:
    """The base's ``render``, its ``ui.*`` modules copied into a temporary package of their own."""
    folder = Path(tempfile.mkdtemp(prefix="lc_render_bench_"))
    package = folder / "lc_old_ui"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in OLD_MODULES:
        source = subprocess.run(
            ["git", "show", f"{base}:ui/{name}.py"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
        (package / f"{name}.py").write_text(source.replace("from ui.", "from lc_old_ui."))
    sys.path.insert(0, str(folder))
    module = importlib.import_module("lc_old_ui.safe_markdown")
    old: Callable[[str], str] = module._render  # uncached, as this tree's render_fresh
    return old


def best(render_it: Callable[[str], str], text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        began = time.thread_time()
        render_it(text)
        times.append(time.thread_time() - began)
    return min(times)


def _child(render_it: Callable[[str], str], text: str, out: multiprocessing.Queue) -> None:
    try:
        began = time.thread_time()
        render_it(text)
        out.put(time.thread_time() - began)
    except BaseException as exc:  # noqa: B036 - the base's failure is what is measured
        out.put(type(exc).__name__)


def timed_apart(render_it: Callable[[str], str], text: str, timeout: float) -> float | str:
    """Seconds for ``render_it(text)`` in a forked child, the exception's name, or ``> timeout s``."""
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_child, args=(render_it, text, out))
    child.start()
    child.join(timeout)
    if child.is_alive():
        child.kill()
        child.join()
        return f"> {timeout:g} s"
    result: float | str = out.get(timeout=5)
    return result


def per_kb(seconds: float | str, chars: int) -> str:
    return f"{seconds * 1e6 / chars:9.2f}" if isinstance(seconds, float) else f"{seconds:>9}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=None, help="the revision whose renderer is compared (default: markdown2's)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000, 100_000])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--old-timeout", type=float, default=8.0)
    parser.add_argument("--families", nargs="*", default=list(SHOWN))
    args = parser.parse_args()
    base = args.base or default_base()
    old = load_old(base)
    print(f"CPU ms per KB (1,000 characters); base {base}; the base killed after {args.old_timeout:g} s (wall)")
    print(f"{'family':16} {'chars':>7} {'render':>9} {'tail':>9} {'base':>9}")
    for family in args.families:
        for size in args.sizes:
            text = FAMILIES[family](size)
            chars = len(text)
            new = best(render_fresh, text, args.repeat)
            tail = best(render_tail, text, args.repeat)
            before = timed_apart(old, text, args.old_timeout)
            print(f"{family:16} {chars:7} {per_kb(new, chars)} {per_kb(tail, chars)} {per_kb(before, chars)}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
