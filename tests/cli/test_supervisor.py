"""``gitneural serve``'s supervisor with real child processes: a child that dies is
started again; one that cannot stay up stops the set with exit 1; SIGTERM stops all."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.paths import ROOT
from tests.support.services import children_of, pid_alive, wait_for

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def run_supervisor(children: dict[str, list[str]], log: Path) -> subprocess.Popen[bytes]:
    code = textwrap.dedent(
        f"""
        import sys
        from bot.cli.server.supervisor import supervise
        sys.exit(supervise({children!r}, stop_timeout=10))
        """
    )
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-c", code], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )


def test_a_killed_child_is_started_again_and_sigterm_stops_all(tmp_path: Path) -> None:
    log = tmp_path / "supervisor.log"
    proc = run_supervisor({"worker": SLEEPER, "web": SLEEPER}, log)
    first = wait_for(lambda: len(children_of(proc.pid)) == 2 and children_of(proc.pid), "2 kids")
    subprocess.run(["kill", "-KILL", str(first[0])], check=True)
    wait_for(
        lambda: first[0] not in children_of(proc.pid) and len(children_of(proc.pid)) == 2,
        "the killed child to be replaced",
    )
    assert proc.poll() is None
    assert "exited with -9; starting it again" in log.read_text()
    kids = children_of(proc.pid)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    wait_for(lambda: not any(pid_alive(p) for p in kids), "every child to stop", 10)


def test_a_child_that_cannot_stay_up_stops_the_set(tmp_path: Path) -> None:
    log = tmp_path / "supervisor.log"
    broken = [sys.executable, "-c", "import sys; sys.exit(3)"]
    proc = run_supervisor({"worker": broken, "web": SLEEPER}, log)
    assert proc.wait(timeout=60) == 1  # at once, then after 2, 4 and 8 s
    text = log.read_text()
    assert text.count("the worker process exited with 3; starting it again") == 4
    assert "exited with 3 5 times in a row soon after starting; stopping" in text
