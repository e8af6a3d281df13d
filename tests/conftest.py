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


#: Modules whose tests share a module- or session-scoped fixture that takes long to make
#: (a virtual environment with GitNeural installed, a deployment of serve and workers, the
#: pre-commit framework's hook environment). Their tests run on one xdist worker (the
#: ``loadgroup`` distribution in pyproject's addopts), which makes the fixture once;
#: spread over the workers, every worker made its own.
SHARED_SETUP = (
    "tests/cli/test_doctor.py",
    "tests/cli/test_light_install.py",
    "tests/hook/test_hook_framework.py",
    "tests/system/test_commands_e2e.py",
    "tests/system/test_conversation_e2e.py",
    "tests/system/test_evidence_e2e.py",
    "tests/system/test_hostile_model_output.py",
    "tests/system/test_newcomer.py",
    "tests/system/test_serve.py",
    "tests/system/test_workers_e2e.py",
    "tests/system/test_workers_faults.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The slowest tests first (tests/support/slow_first.py says why); the sort is stable,
    # so every other test keeps its place, and each xdist worker computes the same order.
    slowest = listed()
    items.sort(key=lambda item: rank(item.nodeid, slowest))
    for item in items:
        module = item.nodeid.split("::")[0]
        if module in SHARED_SETUP:
            item.add_marker(pytest.mark.xdist_group(module))
