"""What the command-line tests share: a repository with the planted bug staged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.planted import ORIGINAL, PLANTED
from tests.support.repos import commit, make_repo, stage


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    commit(repo, {"people.py": ORIGINAL, "README.md": "people\n"}, "initial")
    stage(repo, {"people.py": PLANTED})
    return tmp_path / "repo"
