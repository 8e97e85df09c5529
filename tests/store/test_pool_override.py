"""``store.postgres.pool.Pool`` replaces one private method of psycopg_pool (its check loop: see the method); the
installed psycopg_pool must still have it, with the helpers it calls, or the replacement would be silently skipped
(a renamed method) or break (a renamed helper). Fails on an upgrade that changed them: read the new loop, adapt."""

from __future__ import annotations

import inspect

from psycopg_pool import ConnectionPool

from store.postgres.pool import Pool


def test_the_pool_replaces_a_check_loop_psycopg_pool_still_has_with_the_helpers_it_calls() -> None:
    loop = ConnectionPool.__dict__.get("_getconn_with_check_loop")
    assert loop is not None and list(inspect.signature(loop).parameters) == ["self", "deadline"]
    assert Pool.__dict__["_getconn_with_check_loop"] is not loop
    for helper in ("_getconn_unchecked", "_check_connection", "_putconn"):
        assert callable(getattr(ConnectionPool, helper, None)), helper
    assert "_getconn_with_check_loop(deadline)" in inspect.getsource(ConnectionPool.getconn)
