"""The test command cannot pass by skipping: ``tasks.py test`` stops, naming what is missing, when a prerequisite
of the suite cannot be had, and pytest fails any skip that the allow-list (``tests/support/skips.py``) does not
name. Both are run for real: ``tasks.py`` with a PATH that hides Chromium, pytest on small test files of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HIDDEN = ("chromium", "chromedriver", "apt-get")  # without apt-get, Chromium cannot be installed either


def clean_env(**more: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LEDGERCHAT_", "LC_TEST_"))}
    return {**keep, **more}


def path_without(names: tuple[str, ...], folder: Path) -> str:
    """A PATH of one folder holding a link to every program on today's PATH except ``names``."""
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            target = folder / entry.name
            if entry.name not in names and not target.exists() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    return str(folder)


@pytest.mark.timeout(600)  # the first run after pyproject's dependencies changed installs them into .venv
def test_hiding_chromium_from_the_test_command_stops_it_with_a_sentence_naming_chromium(tmp_path: Path) -> None:
    path = path_without(HIDDEN, tmp_path / "bin")
    result = subprocess.run(
        [sys.executable, str(ROOT / "tasks.py"), "test", "tests/app/test_docs.py"],
        cwd=ROOT,
        env=clean_env(PATH=path),
        capture_output=True,
        text=True,
        timeout=590,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "some cannot run on this machine" in result.stderr
    assert "Chromium is missing (no `chromium` on PATH) and cannot be installed here" in result.stderr
    assert "--allow-skip" in result.stderr
    ran = [line for line in result.stdout.splitlines() if line.startswith("+ ") and " -m pip " not in line]
    assert ran == [], "no lint, no types, no test ran"


def run_pytest(tmp_path: Path, body: str, **env: str) -> subprocess.CompletedProcess[str]:
    """pytest with the suite's own hooks (``tests/conftest.py`` as a plugin) on one test file of ``body``."""
    (tmp_path / "test_one.py").write_text("import pytest\n\n\n" + body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-rs", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=ROOT,
        env=clean_env(PYTHONPATH=str(ROOT), **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_skip_whose_reason_is_not_in_the_allow_list_fails_the_run_quoting_the_reason(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "def test_it():\n    pytest.skip('no reason at all')\n")
    assert result.returncode == 1, result.stdout
    assert "skipped for a reason not in the allow-list of tests/support/skips.py: no reason at all" in result.stdout
    assert "1 failed" in result.stdout


def test_a_skip_from_a_fixture_or_a_marker_fails_the_same_way(tmp_path: Path) -> None:
    body = (
        "@pytest.fixture\ndef needs():\n    pytest.skip('set-up said no')\n\n\n"
        "def test_fixture(needs):\n    pass\n\n\n"
        "@pytest.mark.skip(reason='marked away')\ndef test_marker():\n    pass\n"
    )
    result = run_pytest(tmp_path, body)
    assert result.returncode == 1, result.stdout
    assert "set-up said no" in result.stdout and "marked away" in result.stdout
    assert "2 errors" in result.stdout, "both are set-up skips, so both are errors"


def test_an_allowed_skip_passes_and_the_rs_line_shows_its_reason(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, "def test_it():\n    pytest.skip('Ollama has no safety filter')\n")
    assert result.returncode == 0, result.stdout
    assert "SKIPPED [1]" in result.stdout and "Ollama has no safety filter" in result.stdout


def test_a_missing_prerequisite_fails_unless_the_run_knowingly_allows_it(tmp_path: Path) -> None:
    body = "def test_it():\n    pytest.skip('Debian chromium is not installed (tasks.py installs it)')\n"
    refused = run_pytest(tmp_path, body)
    assert refused.returncode == 1 and "it needs chromium" in refused.stdout and "--allow-skip" in refused.stdout
    allowed = run_pytest(tmp_path, body, LC_TEST_ALLOW_SKIP="chromium,postgresql,tmpfs")
    assert allowed.returncode == 0, allowed.stdout
    assert "SKIPPED [1]" in allowed.stdout and "Debian chromium is not installed" in allowed.stdout


def test_a_test_that_hangs_fails_after_its_timeout_with_the_stack_where_it_hung(tmp_path: Path) -> None:
    body = "import threading\n\n\n@pytest.mark.timeout(2)\ndef test_it():\n    threading.Event().wait()  # never set\n"
    result = run_pytest(tmp_path, body)
    assert result.returncode == 1, result.stdout
    assert "Failed: Timeout (>2.0s) from pytest-timeout." in result.stdout
    assert "threading.Event().wait()  # never set" in result.stdout, "the stack shows where it hung"
