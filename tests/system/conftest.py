"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.services import AppWorld, app_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppWorld]:
    """The fake GitHub with a planted-bug repository and the K3 stub, shared by a module's
    tests (each test opens its own pull requests)."""
    with app_world(tmp_path_factory.mktemp("world")) as w:
        yield w
