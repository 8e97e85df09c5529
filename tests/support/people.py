"""Team mode in tests: accounts made with the real command (``main.py users``) and people signed in through the
real sign-in page.

Guarantees: ``add_account`` runs ``main.py users add`` against an app's data folder (beside a running app: the
accounts file is locked while written), the password on standard input, and fails the test with the command's
output if it refused; ``users`` runs any other ``users`` action the same way; ``sign_in`` types the name and
password into the page's labelled fields, presses "Sign in" and returns once the chat page is ready for typing.
"""

from __future__ import annotations

import json
import subprocess
import sys

from playwright.sync_api import Page, expect

from tests.support.app_process import ROOT, AppProcess

PASSWORD = "correct horse battery staple"


def users(
    app: AppProcess, *args: str, password: str | None = None, database_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``main.py users *args`` on the app's data folder (or on ``database_url``)."""
    where = ("--database-url", database_url) if database_url else ("--data-dir", str(app.data_dir))
    return subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "users", *args, *where],
        input=None if password is None else password + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


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


def exported(app: AppProcess, cid: str) -> list[dict[str, object]]:
    """``main.py export`` of conversation ``cid`` from the app's data folder, as its JSON lines."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), "export", "--conversation", cid, "--data-dir", str(app.data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
