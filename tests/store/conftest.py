"""Shared set-up of the store tests: TinyDB stores on the test's one data folder, closed after the test.

The contract suite's ``stores`` (both back ends, parametrized) still comes from ``tests/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.stores import StoreMaker


@pytest.fixture
def tinydb_stores(tmp_path: Path) -> Iterator[StoreMaker]:
    """Opens TinyDB stores on one data folder (``folder``), with the store's own 250 ms flush interval unless a
    test names another; every store opened is closed after the test."""
    maker = StoreMaker("tinydb", str(tmp_path / "data"), flush_interval=0.25)
    yield maker
    maker.close_all()
