"""The cluster suite's set-up: real app processes on one PostgreSQL database, one fixture per way of sharing it.

Guarantees: every test here that drives Chromium (it uses the ``browser`` fixture, directly or through
``open_page``) is marked ``browser`` and skipped, saying why, where Debian's Chromium is missing; ``faulty`` is a
cluster of the module's own (faults on it never touch the session's); ``apps_on_one_database`` is four instances up
together on one database, shared by a module (start-up costs seconds); ``app_after_app_on_one_database`` starts
instances one at a time on the test's fresh database.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.app_runner import AppRunner
from tests.support.chromium import mark_as_browser_tests
from tests.support.instances import AppAfterApp, AppsOnOneDatabase
from tests.support.postgres import PostgresCluster, throwaway_cluster

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = [item for item in items if item.path.is_relative_to(HERE)]
    mark_as_browser_tests(item for item in here if "browser" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="module")
def faulty() -> Iterator[PostgresCluster]:
    """A PostgreSQL cluster of the module's own, to restart, stop and start (the session's is never disturbed)."""
    yield from throwaway_cluster()


@pytest.fixture(scope="module")
def pair(pg_cluster: PostgresCluster, run_app: AppRunner) -> Iterator[AppsOnOneDatabase]:
    """Instances A and B, started together on one fresh database, for the tests of one module."""
    url = pg_cluster.new_database()
    with run_app.together(2, "--database-url", url) as (a, b):
        yield AppsOnOneDatabase(url, a, b, ())


@pytest.fixture(scope="module")
def apps_on_one_database(pg_cluster: PostgresCluster, run_app: AppRunner) -> Iterator[AppsOnOneDatabase]:
    """Instances A and B and two spares, started together on one fresh database, for the tests of one module."""
    url = pg_cluster.new_database()
    with run_app.together(4, "--database-url", url) as (a, b, *spares):
        yield AppsOnOneDatabase(url, a, b, tuple(spares))


@pytest.fixture
def app_after_app_on_one_database(database_url: str, run_app: AppRunner) -> AppAfterApp:
    """Instances one at a time on the test's fresh database (``with app_after_app_on_one_database.start() as a``)."""
    return AppAfterApp(database_url, run_app)
