"""What a parser may be asked to read: a size and a nesting depth checked before it runs,
and the time it may take.

tree-sitter runs in C holding the GIL: a file of 400 kB of nested ``[`` made its query
run for minutes, and no other thread of the process (a worker's lease heartbeat) ran
meanwhile. So a file is measured before any parser sees it, in linear time and inside
the library (:meth:`bytes.translate`, :func:`itertools.accumulate`), and refused past
:data:`MAX_PARSE_BYTES` or :data:`MAX_NESTING`; a parse that still runs long is stopped
at :data:`PARSE_SECONDS` by tree-sitter's own progress callback. A refused file raises
:class:`bot.errors.UnparsableError`: the review reads it without context and names it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from itertools import accumulate

from bot.errors import UnparsableError

__all__ = [
    "MAX_NESTING",
    "MAX_PARSE_BYTES",
    "PARSE_SECONDS",
    "check_parseable",
    "nesting_depth",
    "stop_after",
]

#: Files larger than this are never parsed (as large as the index and the context read).
MAX_PARSE_BYTES = 1_000_000
#: Brackets open at once, at most: real code stays far below (the standard library of
#: Python and Go's tree nest under 40), generated tables included.
MAX_NESTING = 256
#: Seconds one parse may run before tree-sitter is told to stop.
PARSE_SECONDS = 2.0

_OPENERS = b"([{"
_CLOSERS = b")]}"
_OTHERS = bytes(b for b in range(256) if b not in _OPENERS + _CLOSERS)
#: Byte → its step in depth (only brackets are left when it is used).
_STEP = [1 if b in _OPENERS else -1 if b in _CLOSERS else 0 for b in range(256)]


def nesting_depth(data: bytes) -> int:
    """The most brackets open at once in ``data``, counted over every byte (strings and
    comments too: a cheap upper bound, linear, and never less than the parser sees)."""
    brackets = data.translate(None, _OTHERS)
    return max(accumulate(map(_STEP.__getitem__, brackets), initial=0))


def check_parseable(data: bytes) -> None:
    """Raises :class:`UnparsableError` when ``data`` is too large or nested too deeply
    to be given to a parser."""
    if len(data) > MAX_PARSE_BYTES:
        raise UnparsableError(f"over {MAX_PARSE_BYTES:,} bytes, not parsed")
    if nesting_depth(data) > MAX_NESTING:
        raise UnparsableError(f"nested over {MAX_NESTING} brackets deep, not parsed")


def stop_after(seconds: float = PARSE_SECONDS) -> Callable[..., bool]:
    """A tree-sitter progress callback that asks the library to stop past ``seconds``
    from now (calling back into Python also lets the other threads run)."""
    deadline = time.monotonic() + seconds

    def progress(*_: object) -> bool:
        return time.monotonic() > deadline

    return progress
