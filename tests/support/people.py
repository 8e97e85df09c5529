"""Team mode in tests: accounts made with the real command (``main.py users``) and people signed in through the
real sign-in page.

Guarantees: ``add_account`` runs ``main.py users add`` against an app's data folder (beside a running app: the
accounts file is locked while written), the password on standard input, and fails the test with the command's
output if it refused; ``users`` runs any other ``users`` action the same way; ``exported`` is ``main.py export`` of
one conversation. These commands run in the test's process (``tests.support.cli.run_cli``: a fresh interpreter
costs seconds of litellm's import each time). ``sign_in`` types the name and password into the page's labelled
fields, presses "Sign in" and returns once the chat page is ready for typing.
"""

from __future__ import annotations

import subprocess

from playwright.sync_api import Page, expect

from tests.support.app_process import AppProcess
from tests.support.cli import run_cli

PASSWORD = "correct horse battery staple"


def users(
    app: AppProcess, *args: str, password: str | None = None, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``main.py users *args`` on the app's data folder (or on ``database_url``)."""
    where = ("--database-url", database_url) if database_url else ("--data-dir", str(app.data_dir))
    return run_cli("users", *args, *where, input=None if password is None else password + "\n")


def add_account(
    app: AppProcess, name: str, password: str = PASSWORD, *, admin: bool = False, database_url: str | None = None
) -> None:
    role = ("--admin",) if admin else ()
    done = users(app, "add", name, *role, "--password-stdin", password=password, database_url=database_url)
    assert done.returncode == 0, done.stderr


def sign_in(page: Page, app: AppProcess, name: str, password: str = PASSWORD) -> Page:
    page.goto(app.url + "/")
    page.get_by_label("Username").fill(name)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_label("Message")).to_be_visible()
    page.wait_for_function("() => window.did_handshake === true")
    return page


def exported(app: AppProcess, cid: str, *, having: str | None = None) -> list[dict[str, object]]:
    """``main.py export`` of conversation ``cid``, as its JSON lines (``AppProcess.export``: ``having`` waits for
    an event of that kind to reach the disk); the conversation must be there."""
    events = app.export(cid, having=having)
    assert events, f"no conversation {cid} in the app's ledger"
    return events
