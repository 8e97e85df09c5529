"""A PostgreSQL restart costs the store and the attempt owners one reconnect: the next append is durable without
an error, the next claim works. The module has its own cluster (restarting the session's would disturb others)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from ledger.events import Created, Renamed
from store.health import ProblemLog
from store.postgres.owners import AttemptOwners
from store.postgres.store import PgStore
from tests.support.postgres import PostgresCluster, throwaway_cluster


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[PostgresCluster]:
    yield from throwaway_cluster()


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_after_a_restart_the_next_append_and_claim_work_at_once(
    own_cluster: PostgresCluster, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    url = own_cluster.new_database()
    store = PgStore.open(url, flush_interval=0.05, release_after=0.1)
    owners = AttemptOwners(
        url, store.instance, lease=5.0, on_request=lambda r: None, problems=ProblemLog(logging.getLogger())
    )
    owners.start()
    try:
        for n in range(3):  # the pools hold connections from before
            store.append(Created(conversation_id=f"c{n}", ts="t", title="before"))
        assert store.flush_sync() and owners.claim("a0", "c0") > 0
        own_cluster.restart(mode)
        caplog.clear()
        caplog.set_level(logging.ERROR, logger="store.postgres.store")
        renamed = store.append(Renamed(conversation_id="c1", ts="t", title="after the restart"))
        assert store.flush_sync(timeout=5), "durable at the first try"
        health = store.health()
        assert health.saving_fails is None and health.failed_tries == 0
        assert not [p for p in health.problems if p.kind == "saving"], health.problems
        assert not [r for r in caplog.records if "Saving fails" in r.getMessage()], "no failed try at all"
        assert owners.claim("a1", "c1") > owners.claim("a0", "c0") > 0
        own_cluster.restart(mode)
        owners.release(["a0", "a1"])  # on a fresh connection
        assert owners.held == {} and owners.owners(["a0", "a1"]) == []
        reader = PgStore.open(url, read_only=True)
        assert list(reader.events("c1"))[-1] == renamed
    finally:
        owners.close()
        store.close()
