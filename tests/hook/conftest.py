"""Fixtures of the hook tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hook import clean_env


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment for git and the hook (see :func:`tests.support.hook.clean_env`)."""
    return clean_env(tmp_path)
