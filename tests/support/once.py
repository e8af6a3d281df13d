"""Set-up that costs minutes (a virtual environment with GitNeural pip-installed, the
pre-commit hook's environment) made once per test run, however many xdist workers need it.

A session fixture runs once per worker, and the tests that share one are handed out to
different workers (each test is its own unit: tests/conftest.py), so each worker would
build its own copy. This is pytest-xdist's documented recipe instead: the first worker to
take a file lock in the run's shared temporary directory builds; the others wait on the
lock and use what it built. A build that fails leaves no "done" mark, so the next worker
to take the lock builds again and meets the same error in its own test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

#: Written inside the built folder once its builder has returned.
DONE = ".built"


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """``<run's temp>/<name>``, made by ``build(folder)`` unless a worker already made it."""
    # getbasetemp() is this worker's folder (…/popen-gw0 under xdist); its parent is the
    # run's, shared by every worker. Without xdist it is the run's own folder.
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if base.name.startswith("popen-gw") else base
    folder = shared / name
    with FileLock(str(shared / f"{name}.lock")):
        if not (folder / DONE).is_file():
            if folder.exists():
                # What a failed build left behind: built again from nothing.
                shutil.rmtree(folder)
            folder.mkdir()
            build(folder)
            (folder / DONE).write_text("", "utf-8")
    return folder
