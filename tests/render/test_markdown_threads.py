"""GitHub's parser from several threads at once, as a threaded worker renders reviews.

cmark-gfm registers its extensions on the first render without a lock, and the binding
releases the GIL: when two threads render first at once, the second registration aborts
the process. A worker died so in a burst; 5 of 40 fresh processes aborted here before the
registration moved to the import of :mod:`bot.render.markdown_check`.
"""

from __future__ import annotations

import subprocess
import sys

from tests.support.paths import ROOT

FIRST_RENDERS_AT_ONCE = """
import threading
from bot.render.markdown_check import render_github

start = threading.Barrier(8)
tables = []

def render():
    start.wait()  # straight into the C call: the window is the first render's
    tables.append(render_github("| a | b |\\n|---|---|\\n| 1 | 2 |\\n").startswith("<table>"))

threads = [threading.Thread(target=render) for _ in range(8)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
assert tables == [True] * 8, tables
"""


def _fresh_process() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FIRST_RENDERS_AT_ONCE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_first_renders_on_eight_threads_at_once_never_abort_the_process() -> None:
    # Each process renders for the first time once: the race needs fresh processes, one
    # at a time (two at once on two cores left the threads too little overlap to race).
    runs = [_fresh_process() for _ in range(40)]
    failed = [(run.returncode, run.stderr.strip()[-200:]) for run in runs if run.returncode]
    assert failed == [], failed
