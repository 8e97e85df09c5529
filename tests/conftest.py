"""Fixtures more than one folder of tests uses: a real OpenAI-compatible SSE upstream on 127.0.0.1, engines on real
TinyDB files, the real app as a process (``run_app``, and the two session-wide apps ``token_app`` and
``loopback_app``), headless Chromium and its pages (``browser``, ``open_page``), and a real PostgreSQL server (a
throwaway cluster started once per session) with a fresh database per test. A folder's own set-up is in its
``conftest.py``.

Every run: a skip whose reason is not in the allow-list of ``tests/support/skips.py`` fails the test that skipped
(``pytest_runtest_makereport``, ``pytest_make_collect_report``)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault(
    "LEDGERCHAT_TITLES", "off"
)  # no chat is named by the model unless a test asks (engine.policies.titles)

from playwright.sync_api import Browser  # noqa: E402

from engine.offline import litellm  # noqa: E402
from store.tinydb.store import Store  # noqa: E402
from tests.support.app_process import AppProcess  # noqa: E402
from tests.support.app_runner import AppRunner  # noqa: E402
from tests.support.browser import Pages  # noqa: E402
from tests.support.chromium import kept, turn  # noqa: E402
from tests.support.contexts import Contexts  # noqa: E402
from tests.support.engine import EngineFactory  # noqa: E402
from tests.support.ledger_builders import conversation_events  # noqa: E402
from tests.support.postgres import PostgresCluster, throwaway_cluster  # noqa: E402
from tests.support.skips import fail_unexpected_skip  # noqa: E402
from tests.support.stores import StoreMaker  # noqa: E402
from tests.support.upstream import ScriptedUpstream, serve  # noqa: E402


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules marked ``early`` (minutes of scenario waits) first, then those whose tests start an app
    (``run_app``), then the rest, each group by its number of tests (most first), a module's tests in their own
    order: pytest-xdist hands out modules in this order (``tasks.py test``), so the modules still running when the
    other workers have nothing left are short ones."""
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(str(item.path), []).append(item)

    def cost(group: list[pytest.Item]) -> tuple[bool, bool, int]:
        early = any(item.get_closest_marker("early") for item in group)
        starts_apps = any("run_app" in getattr(item, "fixturenames", ()) for item in group)
        return not early, not starts_apps, -len(group)

    items[:] = [item for group in sorted(modules.values(), key=cost) for item in group]


def pytest_deselected(items: list[pytest.Item]) -> None:
    """With ``LC_TEST_SOLO_LIST`` set (``tasks.py test``'s first phase), the files holding the ``solo`` tests it
    leaves out are added to that file: the second phase collects only those."""
    listed = os.environ.get("LC_TEST_SOLO_LIST")
    files = {str(item.path) for item in items if item.get_closest_marker("solo")}
    if listed and files:
        with open(listed, "a", encoding="utf-8") as out:
            out.write("".join(f"{f}\n" for f in sorted(files)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    fail_unexpected_skip(report)
    if report.failed:
        add_what_happened(item, report)
    return report


def add_what_happened(item: pytest.Item, report: pytest.TestReport) -> None:
    """A failed test's report also shows its pages' diary (``tests.support.browser.Pages``) and the end of its
    app's log: a failure seen once on a busy machine is read from these."""
    funcargs = getattr(item, "funcargs", {})
    pages = funcargs.get("open_page")
    if pages is not None and getattr(pages, "diary", None):
        report.sections.append(("pages' diary", "\n".join(pages.diary[-80:])))
    app = funcargs.get("app")
    log = getattr(app, "log", None)
    if log is not None and log.exists():
        report.sections.append((f"end of the app's log ({log.name})", log.read_text(errors="replace")[-4000:]))


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    report = yield
    fail_unexpected_skip(report)
    return report


def uses_the_browser(item: pytest.Item) -> bool:
    return "browser" in getattr(item, "fixturenames", ())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    """Each phase of a test that uses the kept browser runs with Playwright's loop marked (``chromium.turn``)."""
    with turn() if uses_the_browser(item) else contextlib.nullcontext():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    with turn() if uses_the_browser(item) else contextlib.nullcontext():
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    with turn() if uses_the_browser(item) else contextlib.nullcontext():
        return (yield)


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[ScriptedUpstream]:
    yield from serve(chunk_delay=0.01)


@pytest.fixture(scope="session")
def model_client() -> None:
    """litellm imported once, before the first test that talks to the upstream: the app imports it at start-up,
    so no test's wait for an answer includes the seconds the import takes (``AppProcess`` likewise waits for the
    app's ready line)."""
    litellm()


@pytest.fixture
def upstream(upstream_server: ScriptedUpstream, model_client: None) -> ScriptedUpstream:
    """The session's scripted upstream with nothing planned and no request recorded yet."""
    upstream_server.reset()
    return upstream_server


@pytest.fixture
async def engines(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[EngineFactory]:
    factory = EngineFactory(tmp_path, upstream)
    yield factory
    await factory.close()


@pytest.fixture(scope="session")
def run_app(tmp_path_factory: pytest.TempPathFactory, upstream_server: ScriptedUpstream) -> Iterator[AppRunner]:
    """The one way a test starts the real app: ``with run_app("--idle-timeout", "3") as app:`` (see ``AppRunner``);
    each app stops when its block ends, and any left running when the session ends."""
    runner = AppRunner(tmp_path_factory.mktemp, upstream_server.base_url)
    yield runner
    runner.stop_all()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """One headless Chromium (Debian's) per test process, kept across modules (``tests.support.chromium.kept``:
    the async tests of later modules run as if it were not there); tests open pages in it with ``open_page``."""
    with kept() as chromium:
        yield chromium


@pytest.fixture(scope="session")
def contexts(browser: Browser) -> Iterator[Contexts]:
    """The process's kept browser contexts (``tests.support.contexts``), lent to one test at a time."""
    kept = Contexts(browser)
    yield kept
    with turn():  # the session may end in a phase of a test without the browser
        kept.close()


@pytest.fixture
def open_page(contexts: Contexts) -> Iterator[Pages]:
    """The one page opener: ``open_page(app, "/chat/c1", width=390)`` is a page in a context of its own for this
    test (cookies and storage as fresh), ready for typing (its socket connected); every page it opened, and every
    tab those opened, is closed when the test ends."""
    pages = Pages(contexts)
    yield pages
    pages.close()


@pytest.fixture(scope="session")
def token_app(tmp_path_factory: pytest.TempPathFactory, run_app: AppRunner) -> Iterator[AppProcess]:
    """The real app bound to every address (0.0.0.0), so with a generated token, on the scripted upstream; its
    data dir starts with one conversation, ``c1``. Reached on 127.0.0.1 (rate-limit tests use 127.0.0.2)."""
    data = tmp_path_factory.mktemp("token-app") / "data"
    store = Store.open(data)
    [store.append(e) for e in conversation_events("c1", answers=1, chunks=5)]
    store.close()
    with run_app(data=data, host="0.0.0.0") as process:
        yield process


@pytest.fixture(scope="session")
def loopback_app(run_app: AppRunner) -> Iterator[AppProcess]:
    """The real app on the IPv6 loopback (::1), default settings: no token, the built-in demo model."""
    with run_app(demo_model=True, host="::1") as process:
        yield process


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster in a temp dir; tests that need it are skipped, saying why, without one."""
    yield from throwaway_cluster()


@pytest.fixture
def database_url(pg_cluster: PostgresCluster) -> str:
    """The URL (with its password) of a fresh, empty database on the session's cluster."""
    return pg_cluster.new_database()


@pytest.fixture(params=["tinydb", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreMaker]:
    """Opens stores of one kind on one location per test: a temp data dir, or a fresh PostgreSQL database."""
    location = request.getfixturevalue("database_url") if request.param == "postgres" else str(tmp_path / "data")
    maker = StoreMaker(request.param, location)
    yield maker
    maker.close_all()
