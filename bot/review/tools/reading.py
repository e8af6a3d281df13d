"""``read_file``'s windows: a window of a huge file costs what the window costs.

K3 pages through a long file a window at a time (and a prompt injection can ask for one
line of a 50 MB file over and over). Reading the blob and splitting it into lines on
every call cost 2.5 s and 100+ MB a call; so a large file is read once per snapshot and
kept (:class:`FileCache`, bounded in bytes) with a sparse line index
(:class:`FileLines`), and a call touches only the window's bytes.

Redaction stays per line (:func:`bot.review.secrets.redaction.redact_text`) but runs on
the window plus a margin, never on the file: a multi-line block (a private key) cut by
the window's edge must still be recognised whole, so the index also records where the
file's PEM markers are, and the redacted range grows to take in a block that crosses
either edge of the window (:meth:`FileLines.block_bounds`).
"""

from __future__ import annotations

import bisect
import re
import threading
from collections import OrderedDict
from collections.abc import Callable

from bot.review.secrets.redaction import redact_text
from bot.review.tools.search import is_binary
from bot.text import decode_text

#: Bytes per entry of the sparse line index.
_CHUNK = 64 * 1024
#: Files smaller than this are read on every call (cheaper than keeping them).
CACHE_MIN_BYTES = 1_000_000
#: A private key block is at most this far from its other marker (redaction looks no
#: further than 20,000 characters); larger than that bound so no block is cut short.
_BLOCK_SPAN = 100_000
#: The markers that open and close a private key block, as redaction matches them.
_MARKER = re.compile(rb"-----(BEGIN|END)[A-Z0-9 ]{0,40} PRIVATE KEY")


def undecodable(data: bytes) -> bool:
    """Not text: a NUL, or invalid UTF-8 with many control bytes (a legacy-encoded text
    file has few)."""
    head = data[:8000]
    if is_binary(head):
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:
            controls = sum(1 for b in head if b < 9 or 13 < b < 32 or b == 127)
            return controls > len(head) // 100
    return False


class FileLines:
    """A file's bytes, where its lines start (sparsely) and where its key markers are."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        newlines = data.count(b"\n")
        self.total = 0 if not data else newlines + (0 if data.endswith(b"\n") else 1)
        self._newlines = newlines
        #: _before[k]: newlines before chunk k.
        self._before = [0]
        for pos in range(0, len(data), _CHUNK):
            self._before.append(self._before[-1] + data.count(b"\n", pos, pos + _CHUNK))
        self._markers: list[int] = []
        self._begins: list[bool] = []
        for found in _MARKER.finditer(data):
            self._markers.append(found.start())
            self._begins.append(found.group(1) == b"BEGIN")

    def offset(self, line: int) -> int:
        """Byte offset where 1-based ``line`` starts (``len(data)`` past the last)."""
        wanted = line - 1
        if wanted <= 0:
            return 0
        if wanted > self._newlines:
            return len(self.data)
        # The chunk holding the wanted-th newline, then the newline within it.
        chunk = bisect.bisect_left(self._before, wanted) - 1
        pos = chunk * _CHUNK
        piece = self.data[pos : pos + _CHUNK]
        rest = piece.split(b"\n", wanted - self._before[chunk])[-1]
        return pos + len(piece) - len(rest)

    def _line_start(self, offset: int) -> int:
        return self.data.rfind(b"\n", 0, offset) + 1

    def _line_end(self, offset: int) -> int:
        end = self.data.find(b"\n", offset)
        return len(self.data) if end < 0 else end + 1

    def block_bounds(self, start: int, end: int) -> tuple[int, int]:
        """``start..end`` (byte offsets at line starts) grown to whole key blocks: back to
        a BEGIN whose block is open at ``start``, on to an END that closes one open at
        ``end`` (paired or not: a block cut short is redacted by its body lines)."""
        marks, begins = self._markers, self._begins
        before = bisect.bisect_left(marks, start) - 1
        if before >= 0 and begins[before] and start - marks[before] <= _BLOCK_SPAN:
            start = self._line_start(marks[before])
        after = bisect.bisect_left(marks, end)
        if after < len(marks) and not begins[after] and marks[after] - end <= _BLOCK_SPAN:
            end = max(end, self._line_end(marks[after]))
        return start, end

    def pieces(self, start: int, end: int, max_bytes: int) -> list[bytes]:
        """The lines in ``start..end``, each cut to ``max_bytes`` (no line is copied
        whole: a minified line can be megabytes)."""
        out: list[bytes] = []
        pos = start
        while pos < end:
            nl = self.data.find(b"\n", pos, end)
            stop = end if nl < 0 else nl
            out.append(self.data[pos : min(stop, pos + max_bytes)])
            pos = stop + 1
        return out

    def redacted_window(
        self, start: int, end: int, *, margin: int, max_line_bytes: int
    ) -> list[str]:
        """Lines ``start..end`` (1-based, inclusive) as text, redacted as part of the
        window, ``margin`` lines either side and any key block crossing the edges."""
        low = max(1, start - margin)
        high = min(self.total, end + margin)
        first, stop = self.block_bounds(self.offset(low), self.offset(high + 1))
        skip = self.data.count(b"\n", first, self.offset(low)) + (start - low)
        text = "\n".join(decode_text(p) for p in self.pieces(first, stop, max_line_bytes))
        return redact_text(text)[0].split("\n")[skip : skip + end - start + 1]


class FileCache:
    """Large files of one snapshot, read once and kept up to ``max_bytes`` in all (the
    least recently read is dropped first); safe for the tool calls of one turn, which
    run in threads."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._files: OrderedDict[str, FileLines] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, load: Callable[[], bytes | None]) -> FileLines | None:
        with self._lock:
            cached = self._files.get(path)
            if cached is not None:
                self._files.move_to_end(path)
                return cached
            data = load()
            if data is None:
                return None
            lines = FileLines(data)
            if len(data) <= self._max_bytes:
                self._files[path] = lines
                kept = sum(len(f.data) for f in self._files.values())
                while kept > self._max_bytes:
                    _, dropped = self._files.popitem(last=False)
                    kept -= len(dropped.data)
            return lines
