"""What the command-line tests share: a repository with the planted bug staged, and a
model server that accepts and never answers."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
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


@pytest.fixture
def silent_server() -> Iterator[str]:
    """The base URL of a server that accepts, reads every byte, and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            held.append(conn)
            threading.Thread(target=_drain, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    server.close()
    for conn in held:
        conn.close()


def _drain(conn: socket.socket) -> None:
    try:
        while conn.recv(65536):
            pass
    except OSError:
        return
