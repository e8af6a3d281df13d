"""Where the repository and the test fixtures are, for tests and processes started from them."""

from __future__ import annotations

from pathlib import Path

#: The repository's root: ``python -m tests.…`` and ``python -m benchmarks.…`` run from it.
ROOT = Path(__file__).resolve().parents[2]
#: GitHub's example deliveries and the SARIF schema (see ``tests/fixtures``).
FIXTURES = ROOT / "tests" / "fixtures"
