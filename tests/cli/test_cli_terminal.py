"""What the command line shows a person at a terminal: the help for a bare `gitneural`,
colour on a terminal and none under ``NO_COLOR`` (no-color.org)."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path

from tests.cli.test_cli_review import GITNEURAL, run_cli, stub_env, submit
from tests.fakes.k3 import K3Stub


def test_a_bare_gitneural_prints_the_help_not_an_error(tmp_path: Path) -> None:
    bare = run_cli([], tmp_path)
    assert bare.returncode == 0, bare.stderr
    assert bare.stdout.startswith("usage: gitneural") and "review" in bare.stdout
    assert bare.stderr == ""


def _on_a_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    """What ``gitneural ARGS`` writes to standard output when that is a terminal."""
    leader, follower = pty.openpty()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "NO_COLOR"))}
    run = subprocess.Popen(
        [GITNEURAL, *args], cwd=cwd, env={**base, **env}, stdout=follower, stderr=subprocess.PIPE
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    run.wait(timeout=120)
    os.close(leader)
    return shown.decode("utf-8", "replace")


def test_findings_are_coloured_on_a_terminal_unless_no_color_is_set(planted: Path) -> None:
    review = ["review", "--effort", "low", "--quiet"]
    with K3Stub([submit(), submit()]) as stub:
        coloured = _on_a_terminal(review, planted, stub_env(stub))
        plain = _on_a_terminal(review, planted, {**stub_env(stub), "NO_COLOR": "1"})
    assert "people.py:2:" in coloured and "people.py:2:" in plain
    assert "\x1b[1;31m" in coloured  # critical, in bold red
    assert "\x1b[" not in plain
