"""The browser suite's set-up: every test here drives headless Chromium, and each module shares one app.

Guarantees: every test in this folder is marked ``browser`` and is skipped, saying why, where Debian's Chromium
is missing; ``app`` is one real app process per module, started with the module's ``app_options`` (a module
overrides that fixture to pass its own command-line options), stopped when the module's tests are done; ``page``
is a page on it, ready for typing, closed when the test ends; ``oauth`` is the OAuth-protected MCP server, one
per module.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page

from tests.support.app_process import AppProcess
from tests.support.app_runner import AppRunner
from tests.support.browser import Pages
from tests.support.chromium import mark_as_browser_tests
from tests.support.oauth_upstream import OAuthUpstream, running

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    mark_as_browser_tests(item for item in items if item.path.is_relative_to(HERE))


@pytest.fixture(scope="module")
def app_options() -> tuple[str, ...]:
    """The command-line options of the module's app (none: the scripted upstream's model, default settings)."""
    return ()


@pytest.fixture(scope="module")
def app(run_app: AppRunner, app_options: tuple[str, ...]) -> Iterator[AppProcess]:
    """The real app on the scripted upstream, shared by the tests of one module."""
    with run_app(*app_options) as process:
        yield process


@pytest.fixture
def page(open_page: Pages, app: AppProcess) -> Page:
    """A page on the module's app, in a browser context of its own for this test (``tests.support.contexts``)."""
    return open_page(app)


@pytest.fixture(scope="module")
def oauth() -> Iterator[OAuthUpstream]:
    """The OAuth-protected MCP server (``tests.support.oauth_upstream``), one for the module's tests."""
    yield from running()
