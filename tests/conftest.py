"""Fixtures every area of the tests may use."""

from __future__ import annotations

import pytest

from tests.fakes.keys import new_rsa_pem


@pytest.fixture(scope="session")
def rsa_pem() -> str:
    """One RSA private key in PEM per test process: generating one costs a noticeable slice
    of a test, and no file of this repository holds a key."""
    return new_rsa_pem()
