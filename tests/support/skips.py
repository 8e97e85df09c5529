"""Which skips a test run may show, and why each is allowed; any other skip fails the test that skipped.

Guarantees: ``fail_unexpected_skip`` turns the report of a test (or a collected module) that was skipped for a
reason not in ``ALWAYS`` into a failure whose message quotes the reason and names this file, so a run cannot
pass by skipping. The skips for a missing prerequisite (``PREREQUISITES``: Chromium, PostgreSQL, a tmpfs mount)
are allowed only when ``LC_TEST_ALLOW_SKIP`` names the prerequisite (``tasks.py test --allow-skip`` sets it to
all three): a developer who knowingly runs part of the suite. ``tasks.py test`` checks the three before any test
runs and stops with a sentence naming what is missing, so without ``--allow-skip`` they never get this far.
xfail reports are left as they are (there are none today).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

ALLOW_SKIP = "LC_TEST_ALLOW_SKIP"


@dataclass(frozen=True, slots=True)
class Allowed:
    starts: str  # the skip's reason starts with this
    why: str  # why such a skip does not hide a test that should have run


#: skips allowed in every run
ALWAYS = (
    Allowed(
        "Ollama has no safety filter",
        "the safety-filter test runs once per dialect; Ollama's API has no safety filter, so there is no ending by "
        "one to show for it (the other dialects run it)",
    ),
)

#: skips allowed only when ``LC_TEST_ALLOW_SKIP`` names their prerequisite (``tasks.py test --allow-skip``)
PREREQUISITES = {
    "chromium": (
        Allowed("Debian chromium is not installed", "the browser tests need Debian's chromium (Playwright drives it)"),
    ),
    "postgresql": (
        Allowed("PostgreSQL is not installed", "the PostgreSQL tests start a throwaway cluster with initdb/pg_ctl"),
        Allowed("running as root and there is no 'postgres' OS user", "PostgreSQL refuses to run as root"),
    ),
    "tmpfs": (Allowed("cannot mount a small tmpfs here", "a real full disk and a real read-only folder need a mount"),),
}


def allowed_now() -> tuple[Allowed, ...]:
    named = {name.strip() for name in os.environ.get(ALLOW_SKIP, "").split(",") if name.strip()}
    return ALWAYS + tuple(entry for name in sorted(named) for entry in PREREQUISITES.get(name, ()))


def skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def fail_unexpected_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    """Make a skip whose reason is not allowed now a failure that says so (see the module)."""
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = skip_reason(report)
    if any(reason.startswith(entry.starts) for entry in allowed_now()):
        return
    prerequisite = next(
        (name for name, entries in PREREQUISITES.items() if any(reason.startswith(e.starts) for e in entries)), None
    )
    hint = (
        f" (it needs {prerequisite}: install it, or run `python3.11 tasks.py test --allow-skip`, which sets "
        f"{ALLOW_SKIP}={prerequisite},..., to run the rest knowingly)"
        if prerequisite
        else " (add it there with the reason it may be skipped, or make the test run)"
    )
    report.outcome = "failed"
    report.longrepr = f"skipped for a reason not in the allow-list of tests/support/skips.py: {reason}{hint}"
