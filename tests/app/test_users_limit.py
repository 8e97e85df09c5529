"""``main.py users limit NAME VALUE``: an admin sets a person's spend limit, or everyone's (``default``), beside the
accounts (``spend_limits.json``, never the ledger); without a value it says the limit in force; a person set back
to ``default`` falls back to everyone's; a value it cannot read is refused in one sentence (exit code 1)."""

from __future__ import annotations

from pathlib import Path

from store.limits import DEFAULT, FileLimits, SpendLimit
from tests.app.test_users_reset import team_folder
from tests.support.cli import run_cli


def test_users_limit_sets_says_and_resets_a_persons_and_everyones_spend_limit(tmp_path: Path) -> None:
    team_folder(tmp_path)
    data = ("--data-dir", str(tmp_path))
    assert run_cli("users", "limit", "default", "$1/day", *data).stdout.strip() == (
        "everyone: $1/day (UTC days and months)"
    )
    done = run_cli("users", "limit", "ben", "$0.05/day,20000 tokens/month", *data)
    assert done.returncode == 0 and "ben: $0.05/day, 20000 tokens/month" in done.stdout
    stored = FileLimits(tmp_path / "spend_limits.json").limits()
    assert stored == {DEFAULT: SpendLimit(day_usd=1.0), "local:ben": SpendLimit(day_usd=0.05, month_tokens=20000)}
    assert run_cli("users", "limit", "ben", *data).stdout.strip() == "ben: $0.05/day, 20000 tokens/month"
    assert "everyone's limit ($1/day)" in run_cli("users", "limit", "ben", "default", *data).stdout
    assert run_cli("users", "limit", "ann", *data).stdout.strip() == "ann: $1/day"
    refused = run_cli("users", "limit", "ben", "five dollars", *data)
    assert refused.returncode == 1 and "write AMOUNT/day or AMOUNT/month" in refused.stderr and not refused.stdout
    assert run_cli("users", "limit", "nobody", "$1/day", *data).returncode == 1
