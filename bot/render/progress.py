"""A live progress line on stderr while K3 thinks (a review at ``max`` can take minutes).

The model client reports an event when something happens (a phase begins, tokens
arrive); while nothing happens (the server has not answered yet, or a retry waits) a
ticker thread redraws the last event with the time that passed since, so the line never
stands still at "waiting 0s".
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from typing import TextIO

from bot.llm.types import Progress

_SPINNER = "|/-\\"
#: When stderr is not a terminal (CI logs), one line this often at most.
_LOG_EVERY_S = 15.0
#: How often the ticker redraws a line no event has changed.
_TICK_S = 1.0


class ProgressLine:
    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._enabled = enabled
        self._ticks = 0
        self._next_log_s = _LOG_EVERY_S
        self._drawn = False
        self._lock = threading.Lock()
        self._last: tuple[Progress, float] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, event: Progress) -> None:
        if not self._enabled:
            return
        with self._lock:
            self._last = (event, time.monotonic())
            self._draw(event)
            if self._ticker is None:
                self._ticker = threading.Thread(
                    target=self._tick, name="gitneural-progress", daemon=True
                )
                self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(_TICK_S):
            with self._lock:
                if self._stop.is_set() or self._last is None:
                    continue
                event, at = self._last
                since = time.monotonic() - at
                self._draw(dataclasses.replace(event, elapsed_s=event.elapsed_s + since))

    def _draw(self, event: Progress) -> None:
        text = f"K3 {event.phase} {event.elapsed_s:,.0f}s, {event.tokens_received:,} tokens"
        if event.attempt > 1:
            text += f" (attempt {event.attempt})"
        if event.detail:
            text += f": {event.detail}"
        if self._tty:
            self._ticks += 1
            spin = _SPINNER[self._ticks % len(_SPINNER)]
            self._stream.write(f"\r\x1b[2K{spin} {text}")
            self._drawn = True
        else:
            # Short reviews print nothing; long ones a line every _LOG_EVERY_S seconds.
            if event.elapsed_s < self._next_log_s:
                return
            self._next_log_s = event.elapsed_s + _LOG_EVERY_S
            self._stream.write(text + "\n")
        self._stream.flush()

    def done(self) -> None:
        self._stop.set()
        ticker = self._ticker
        if ticker is not None and ticker is not threading.current_thread():
            ticker.join()
        with self._lock:
            if self._drawn:
                self._stream.write("\r\x1b[2K")
                self._stream.flush()
                self._drawn = False
