"""A TCP proxy (on 127.0.0.1 unless told) whose link can be cut and restored, for broker outages in
tests: the worker's connections fail while the shared server runs on for everyone else.

    proxy = CuttableProxy(("127.0.0.1", 6379))
    url = f"redis://127.0.0.1:{proxy.port}/0"
    proxy.cut(); ...; proxy.restore(); proxy.close()
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading


class CuttableProxy:
    """A TCP proxy on 127.0.0.1 in front of Redis. :meth:`cut` resets every connection
    through it and refuses new ones (accepted, then reset at once) until
    :meth:`restore`: the network between a worker and its broker failing, while the
    shared Redis server itself runs on for everyone else."""

    def __init__(
        self, upstream: tuple[str, int], listen: tuple[str, int] = ("127.0.0.1", 0)
    ) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(listen)
        self.port: int = self._listener.getsockname()[1]
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self.cuts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if not self._open.is_set():
                _reset(client)
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                _reset(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                dst.sendall(data)
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            _reset(sock)
        self.cuts += 1

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self._listener.close()


def _reset(sock: socket.socket) -> None:
    # SO_LINGER 0: close with a TCP reset, as a failed link or a restarted NAT does.
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
