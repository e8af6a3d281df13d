"""``serve`` and ``worker`` take ``--settings-file`` as ``setup`` does: the file named is
the one read, wherever it lives (it was ``setup`` only; issue 34, point 9)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.services import GITNEURAL, free_port


@pytest.mark.parametrize("command", [["serve", "--port", str(free_port())], ["worker"]])
def test_the_settings_file_named_is_the_one_read(tmp_path: Path, command: list[str]) -> None:
    settings = tmp_path / "etc" / "app.env"
    settings.parent.mkdir()
    settings.write_text("GITHUB_APP_ID=abc\n")
    done = subprocess.run(
        [*GITNEURAL, *command, "--settings-file", str(settings)],
        env={"PATH": "/usr/bin:/bin", "GITNEURAL_DATA_DIR": str(tmp_path / "data")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert f"in the environment or {settings}" in done.stderr
    # The App id came from that file, nowhere else.
    assert "GITHUB_APP_ID must be the App's numeric id, not 'abc'" in done.stderr
