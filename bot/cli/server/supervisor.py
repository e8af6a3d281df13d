"""``gitneural serve``'s supervisor: its child processes kept running, as a process manager
would keep them.

A child that exits (a worker killed by the OOM killer, a crash) is started again at once,
then after pauses that double while it keeps dying soon after its start (2 s, 4 s, 8 s):
a review it held comes back through its lease (``workers.celeryapp.sweeper``), whatever
process takes it. A child that cannot stay up (``MAX_QUICK_EXITS`` exits in a row, each
within ``QUICK`` seconds of its start: a broken setting, a port taken) stops the whole set
and ``serve`` exits 1, so the process manager above it sees the failure. SIGTERM or
SIGINT stops every child (workers finish or requeue running reviews) and exits 0.
"""

from __future__ import annotations

import ctypes
import logging
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Final

log = logging.getLogger("gitneural.serve")

#: A child that exits within this many seconds of its start "died quickly".
QUICK: Final = 30.0
MAX_QUICK_EXITS: Final = 5
FIRST_PAUSE: Final = 1.0
MAX_PAUSE: Final = 30.0


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    # Linux: if the supervisor is killed outright, its children get SIGTERM too.
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class Child:
    name: str
    command: list[str]
    proc: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    quick_exits: int = 0
    restart_at: float | None = None
    pids: list[int] = field(default_factory=list)

    def start(self) -> None:
        # Own session: a terminal's Ctrl-C reaches only the supervisor, which stops each
        # child once (Celery reads a second signal as "stop now").
        self.proc = subprocess.Popen(
            self.command, start_new_session=True, preexec_fn=_die_with_parent
        )
        self.started, self.restart_at = time.monotonic(), None
        self.pids.append(self.proc.pid)

    def exited(self, code: int) -> bool:
        """Note an exit; ``False`` when the child cannot stay up (give up)."""
        now = time.monotonic()
        self.quick_exits = self.quick_exits + 1 if now - self.started < QUICK else 1
        if self.quick_exits >= MAX_QUICK_EXITS:
            print(
                f"gitneural: error: the {self.name} process exited with {code} "
                f"{self.quick_exits} times in a row soon after starting; stopping",
                file=sys.stderr,
            )
            return False
        pause = min(MAX_PAUSE, FIRST_PAUSE * 2 ** (self.quick_exits - 1))
        pause = pause if self.quick_exits > 1 else 0.0
        print(
            f"gitneural: warning: the {self.name} process exited with {code}; "
            f"starting it again{f' in {pause:.0f} s' if pause else ''}",
            file=sys.stderr,
        )
        self.proc, self.restart_at = None, now + pause
        return True


def supervise(children: dict[str, list[str]], stop_timeout: float) -> int:
    """Run ``children`` until a signal (exit 0), restarting any that exits; exit 1 when
    one cannot stay up."""
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    kids = [Child(name, command) for name, command in children.items()]
    failed = False
    try:
        for kid in kids:
            kid.start()
        log.info("serving: %s", ", ".join(f"{k.name} (pid {k.pids[-1]})" for k in kids))
        while not stop.wait(0.2) and not failed:
            for kid in kids:
                if kid.proc is not None and (code := kid.proc.poll()) is not None:
                    failed = not kid.exited(code)
                due = kid.restart_at is not None and time.monotonic() >= kid.restart_at
                if kid.proc is None and due and not failed:
                    kid.start()
                    log.info("started the %s process again (pid %d)", kid.name, kid.pids[-1])
    finally:
        _stop_all([k.proc for k in kids if k.proc is not None], stop_timeout)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if failed else 0


def _stop_all(procs: list[subprocess.Popen[bytes]], timeout: float) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + timeout
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
