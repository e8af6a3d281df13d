"""The store tests' shared fixture: a store at the newest revision."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bot.store import Store, open_store, upgrade
from tests.support.store import store_url  # noqa: F401 - the fixture


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:  # noqa: F811
    """A store at the newest revision, once on SQLite and once on PostgreSQL."""
    opened = open_store(store_url)
    upgrade(opened)
    yield opened
    opened.close()
