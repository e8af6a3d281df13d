"""A live progress line on stderr while K3 thinks (a review at ``max`` can take minutes)."""

from __future__ import annotations

import sys
from typing import TextIO

from bot.llm.types import Progress

_SPINNER = "|/-\\"
#: When stderr is not a terminal (CI logs), one line this often at most.
_LOG_EVERY_S = 15.0


class ProgressLine:
    def __init__(self, stream: TextIO | None = None, *, enabled: bool = True) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._enabled = enabled
        self._ticks = 0
        self._next_log_s = _LOG_EVERY_S
        self._drawn = False

    def __call__(self, event: Progress) -> None:
        if not self._enabled:
            return
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
        if self._drawn:
            self._stream.write("\r\x1b[2K")
            self._stream.flush()
            self._drawn = False
