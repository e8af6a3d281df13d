"""Fixtures every area of the tests may use."""

from __future__ import annotations

import pytest

from tests.fakes.keys import new_rsa_pem
from tests.support.slow_first import listed, rank


@pytest.fixture(scope="session")
def rsa_pem() -> str:
    """One RSA private key in PEM per test process: generating one costs a noticeable slice
    of a test, and no file of this repository holds a key."""
    return new_rsa_pem()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The slowest tests first (tests/support/slow_first.py says why); the sort is stable,
    # so every other test keeps its place, and each xdist worker computes the same order.
    # The list is also the `slow` mark: what it names leaves the fast lane
    # (`pytest -m "not slow"`). First, so that `-m` deselects by the mark given here.
    slowest = listed()
    for item in items:
        if rank(item.nodeid, slowest) < len(slowest):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: rank(item.nodeid, slowest))
