"""Rename detection exactly as ``git diff -M`` does it (git's diffcore-rename).

GitHub shows a pull request with the renames git finds, and anchors review comments on
that diff. libgit2 scores similarity its own way: it called a moved, edited file a 55%
rename where git shows a deletion and a new file, so the old path went missing from a
review's coverage and LEFT lines were offered that GitHub's diff does not have. This
module is a port of git's algorithm (git 2.39, ``diffcore-rename.c`` and
``diffcore-delta.c``), step for step, so that ties break the same way too:

1. exact renames: a created file whose blob id equals a deleted one's (same mode unless
   both are regular files); among several, an unused source with the same basename;
2. basename matches: a source and a destination whose basename is unique on both sides
   pair up at a stricter score (75% for the default 50%);
3. the matrix: every remaining destination against every remaining source, the four best
   candidates per destination kept, all sorted by score, then taken greedily.

Similarity is git's: both files are cut into chunks that end at a newline or after 64
bytes (a CR before an LF is skipped in text; see ``COUNT_FINAL_LINE`` for the last
chunk), each chunk hashed; the score is the bytes
of the destination's chunks also found in the source over the larger file's size. Files
whose sizes differ too much are not compared at all, and past ``RENAME_LIMIT`` squared
pairs only exact renames are looked for, as git does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

#: git's scale: 60,000 is 100%.
MAX_SCORE = 60_000.0
#: ``-M`` without a number: 50%.
DEFAULT_SCORE = 30_000
#: git's ``diff.renameLimit`` default.
RENAME_LIMIT = 1000
_BASENAME_FACTOR = 0.5
_CANDIDATES_PER_DEST = 4
_HASHBASE = 107_927
_FIRST_FEW_BYTES = 8000
_WORD = 0xFFFFFFFF
_TYPE_MASK = 0o170000
_REGULAR = 0o100000
#: git's chunks: a line of up to 64 bytes with its newline, or 64 bytes of a longer one.
_CHUNK = re.compile(rb"[^\n]{0,63}\n|[^\n]{64}")
#: Hashes of chunks already seen: most lines recur, in a file and across the versions of
#: a renamed one, and hashing byte by byte in Python is the costly part.
_HASHES: dict[bytes, int] = {}
_MEMO_LIMIT = 1 << 20

#: Whether a last line without a newline counts towards similarity. git does since
#: 2.43.2 (before, up to 63 bytes at the end of a file were ignored), and GitHub runs a
#: recent git; the differential test sets it to match the git it compares with.
COUNT_FINAL_LINE = True


@dataclass
class Candidate:
    """One side of a created or deleted file: its path, mode, blob id and content."""

    path: str
    mode: int
    oid: str
    load: Callable[[], bytes]
    _data: bytes | None = field(default=None, repr=False)
    _spans: dict[int, int] | None = field(default=None, repr=False)

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = self.load()
        return self._data

    @property
    def spans(self) -> dict[int, int]:
        if self._spans is None:
            self._spans = span_counts(self.data)
        return self._spans

    @property
    def regular(self) -> bool:
        return self.mode & _TYPE_MASK == _REGULAR


@dataclass(frozen=True)
class Rename:
    source: int
    dest: int
    score: int

    @property
    def similarity(self) -> int:
        """The percentage git prints as ``similarity index N%``."""
        return int(self.score * 100 / MAX_SCORE)


def _chunk_hash(chunk: bytes) -> int:
    accum1 = accum2 = 0
    for byte in chunk:
        previous = accum1
        accum1 = (((accum1 << 7) ^ (accum2 >> 25)) + byte) & _WORD
        accum2 = ((accum2 << 7) ^ (previous >> 25)) & _WORD
    return ((accum1 + accum2 * 0x61) & _WORD) % _HASHBASE


def span_counts(data: bytes, *, final_line: bool | None = None) -> dict[int, int]:
    """Bytes per chunk hash, as git's ``hash_chars`` counts them."""
    if b"\0" not in data[:_FIRST_FEW_BYTES]:
        # git skips a CR right before an LF in text; "\r\r\n" keeps its first CR.
        data = data.replace(b"\r\n", b"\n")
    chunks = _CHUNK.findall(data)
    # Chunks are found back to back from the start; what is left is a last line of fewer
    # than 64 bytes without a newline.
    tail = data[sum(map(len, chunks)) :]
    if tail and (COUNT_FINAL_LINE if final_line is None else final_line):
        chunks.append(tail)
    counts: dict[int, int] = {}
    memo = _HASHES
    for chunk in chunks:
        key = memo.get(chunk)
        if key is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            key = memo[chunk] = _chunk_hash(chunk)
        counts[key] = counts.get(key, 0) + len(chunk)
    return counts


def basename_same(a: str, b: str) -> bool:
    return a.rpartition("/")[2] == b.rpartition("/")[2]


def similarity(source: Candidate, dest: Candidate, minimum: float) -> int:
    """git's ``estimate_similarity``: 0 to 60,000, or 0 when not worth comparing."""
    if not source.regular or not dest.regular:
        return 0
    src_size, dst_size = len(source.data), len(dest.data)
    largest, smallest = max(src_size, dst_size), min(src_size, dst_size)
    if largest * (MAX_SCORE - minimum) < (largest - smallest) * MAX_SCORE:
        return 0
    if not dst_size:
        return 0
    small, large = sorted((source.spans, dest.spans), key=len)
    copied = sum(min(count, large[key]) for key, count in small.items() if key in large)
    return int(copied * MAX_SCORE / largest)


@dataclass
class _Score:
    source: int
    dest: int
    score: int
    name_score: int


def _worse(a: _Score | None, b: _Score | None) -> bool:
    """git's ``score_compare(a, b) > 0``: ``a`` sorts after ``b``."""
    if a is None:
        return b is not None
    if b is None:
        return False
    if a.score == b.score:
        return b.name_score > a.name_score
    return b.score > a.score


class _Matcher:
    def __init__(self, sources: Sequence[Candidate], dests: Sequence[Candidate]) -> None:
        self.sources = sources
        self.dests = dests
        self.used = [False] * len(sources)
        self.found: dict[int, Rename] = {}

    def record(self, dest: int, source: int, score: int) -> None:
        self.used[source] = True
        self.found[dest] = Rename(source, dest, score)

    def exact(self) -> None:
        by_oid: dict[str, list[int]] = {}
        for index, source in enumerate(self.sources):
            by_oid.setdefault(source.oid, []).append(index)
        for d, dest in enumerate(self.dests):
            best, best_score, tries = -1, -1, 100
            for s in by_oid.get(dest.oid, ()):
                source = self.sources[s]
                if not (source.regular and dest.regular) and source.mode != dest.mode:
                    continue
                if self.used[s]:
                    continue
                score = 1 + basename_same(source.path, dest.path)
                if score > best_score:
                    best, best_score = s, score
                    if score == 2:
                        break
                tries -= 1
                if not tries:
                    break
            if best >= 0:
                self.record(d, best, int(MAX_SCORE))

    def remaining_sources(self) -> list[int]:
        return [s for s in range(len(self.sources)) if not self.used[s]]

    def remaining_dests(self) -> list[int]:
        return [d for d in range(len(self.dests)) if d not in self.found]

    def by_basename(self, minimum: int) -> None:
        sources = self.remaining_sources()
        unique_src: dict[str, int] = {}
        for s in sources:
            base = self.sources[s].path.rpartition("/")[2]
            unique_src[base] = -1 if base in unique_src else s
        unique_dst: dict[str, int] = {}
        for d in self.remaining_dests():
            base = self.dests[d].path.rpartition("/")[2]
            unique_dst[base] = -1 if base in unique_dst else d
        for s in sources:
            base = self.sources[s].path.rpartition("/")[2]
            dest = unique_dst.get(base, -1)
            # Without directory-rename hints (a merge's), a basename shared by several
            # files on either side is no hint at all.
            if dest < 0 or unique_src[base] < 0 or dest in self.found:
                continue
            score = similarity(self.sources[s], self.dests[dest], minimum)
            if score >= minimum:
                self.record(dest, s, score)

    def matrix(self, minimum: int, limit: int) -> None:
        sources = self.remaining_sources()
        dests = self.remaining_dests()
        if not sources or not dests or len(sources) * len(dests) > limit * limit:
            return
        table: list[_Score | None] = []
        for d in dests:
            slots: list[_Score | None] = [None] * _CANDIDATES_PER_DEST
            for s in sources:
                this = _Score(
                    s,
                    d,
                    similarity(self.sources[s], self.dests[d], minimum),
                    int(basename_same(self.sources[s].path, self.dests[d].path)),
                )
                worst = 0
                for slot in range(1, _CANDIDATES_PER_DEST):
                    if _worse(slots[slot], slots[worst]):
                        worst = slot
                if _worse(slots[worst], this):
                    slots[worst] = this
            table.extend(slots)
        # Python's sort is stable, as git's STABLE_QSORT: equal scores keep their order.
        ranked = sorted(
            table,
            key=lambda x: (1, 0, 0) if x is None else (0, -x.score, -x.name_score),
        )
        for entry in ranked:
            if entry is None or entry.score < minimum:
                break
            if entry.dest in self.found or self.used[entry.source]:
                continue
            self.record(entry.dest, entry.source, entry.score)


def find_renames(
    sources: Sequence[Candidate],
    dests: Sequence[Candidate],
    *,
    minimum: int = DEFAULT_SCORE,
    limit: int = RENAME_LIMIT,
) -> list[Rename]:
    """The renames among deleted ``sources`` and created ``dests`` (both in path order)."""
    if not sources or not dests:
        return []
    matcher = _Matcher(sources, dests)
    matcher.exact()
    if minimum < MAX_SCORE:
        matcher.by_basename(minimum + int(_BASENAME_FACTOR * (MAX_SCORE - minimum)))
        matcher.matrix(minimum, limit)
    return sorted(matcher.found.values(), key=lambda r: r.dest)
