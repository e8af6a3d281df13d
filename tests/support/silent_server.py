"""A model server that accepts every connection, reads the request and never answers: the
hung server ``review --timeout`` and ``[review] stall_timeout`` must give up on."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class SilentServer:
    """Listens on 127.0.0.1; ``base_url`` is what ``KIMI_BASE_URL`` takes."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        #: Bytes received, over all connections (the requests did arrive).
        self.received = 0

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closed.set()
        self._listener.close()
        with self._lock:
            for conn in self._held:
                conn.close()
        self._thread.join(timeout=5)

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._held)

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self._held.append(conn)
            threading.Thread(target=self._drain, args=(conn,), daemon=True).start()

    def _drain(self, conn: socket.socket) -> None:
        """Read whatever the client sends, and say nothing back."""
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.received += len(data)
