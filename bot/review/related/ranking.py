"""Ranking related code by the repository's reference graph, so the most relevant fits.

The prompt has room for ``related_max_tokens`` of related code, and a change of a few
files in a real repository uses dozens of names, several of them defined in many places
(``String``, ``get``, ``Error``). Which definitions and callers are shown first decides
what the model sees. Folder distance alone misleads: a Go package is one folder, and the
file a change leans on most is often elsewhere.

With the snapshot's symbol index, files form a graph: file A is tied to file B when A
uses a name B defines (weighted by how often, and divided among the files that define
the name, so a name defined everywhere ties nothing much). A **personalised PageRank**
restarted at the changed files scores every file by how closely it is tied to the change
through references, the idea of Aider's repository map. Definition sites and call sites
are then taken best-scored file first, and the names a change uses in the order of how
much they matter to it: how often the added lines use them, how tied their defining files
are to the change, and how unambiguous the name is.

The ranks are computed by "push" (Andersen, Chung and Lang's local algorithm): mass
flows out from the changed files and stops where it becomes too small to matter, so only
the files near the change are ever looked at, and the cost is bounded (``MAX_PUSHES``)
whatever the size of the repository. A file's ties are read from the index's tables of
definitions and references when the flow first reaches it. A deadline stops the pushes
too (a file tied to 20,000 others is pushed many times, each a pass over its ties): the
ranks reached by then are kept.
"""

from __future__ import annotations

import math
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence

from bot.code.grammars import family_of
from bot.code.index import SymbolIndex
from bot.domain.diff import FileDiff

__all__ = ["Ties", "file_ranks", "personalised_pagerank", "used_by_added"]

#: Reference kinds whose names a reader wants the definition of (imports name modules).
USE_KINDS = frozenset({"call", "type"})
DAMPING = 0.85
#: Mass per tie below which a file's share is not passed on (files further away rank 0):
#: the work done is at most about 1 / (TOLERANCE * (1 - DAMPING)) ties followed.
TOLERANCE = 2e-4
#: Files whose mass is passed on, at most: the bound on the cost of a ranking.
MAX_PUSHES = 3_000
#: Files whose ties are read, at most.
MAX_FILES_READ = 400
#: A name defined in more files than this (``toString``, ``get``) ties none of them:
#: it says little about which one a use means, and following it costs the most.
MAX_DEFINERS = 16


class Ties:
    """The files tied to a file, and how strongly: file A is tied to file B by each name
    A uses and B defines, weighted by the square root of the uses and divided among the
    files defining the name, within one language family (:func:`family_of`). Ties are
    symmetric (a definition's file is near its users, a caller's file near what it
    calls) and read from the index on first need."""

    def __init__(self, index: SymbolIndex, *, deadline: float | None = None) -> None:
        self._index = index
        #: Past it a file's ties are read no further (one file defining names 20,000
        #: files use took 5 s to read): what was read is kept.
        self._deadline = math.inf if deadline is None else deadline
        self._definers: dict[tuple[str, str | None], frozenset[str]] = {}
        self._known: dict[str, dict[str, float]] = {}
        self._uses: dict[tuple[str, str | None], Counter[str]] = {}

    def __call__(self, path: str) -> Mapping[str, float]:
        known = self._known.get(path)
        if known is None:
            # Past MAX_FILES_READ files a file is taken as tied to nothing: it keeps what
            # reaches it (reading a file's ties costs about a millisecond).
            over = len(self._known) >= MAX_FILES_READ
            known = self._known[path] = {} if over else self._read(path)
        return known

    def _definer_paths(self, name: str, family: str | None) -> frozenset[str]:
        key = (name, family)
        found = self._definers.get(key)
        if found is None:
            defined = self._index.definitions(name)
            found = frozenset(d.path for d in defined if family_of(d.path) == family)
            self._definers[key] = found
        return found

    def _read(self, path: str) -> dict[str, float]:
        entry = self._index.files.get(path)
        ties: dict[str, float] = defaultdict(float)
        if entry is None:
            return ties
        family = family_of(path)
        uses = Counter(n for n, kind, _ in entry.references if kind in USE_KINDS)
        for name, count in uses.items():
            targets = self._definer_paths(name, family) - {path}
            if len(targets) > MAX_DEFINERS:
                continue
            for target in targets:
                ties[target] += math.sqrt(count) / len(targets)
        for name in {n for n, *_ in entry.definitions}:
            if time.monotonic() > self._deadline:
                break
            definers = self._definer_paths(name, family)
            if len(definers) > MAX_DEFINERS + 1:
                continue
            for user, count in self._users(name, family).items():
                if user != path:
                    ties[user] += math.sqrt(count) / len(definers - {user})
        return ties

    def _users(self, name: str, family: str | None) -> Counter[str]:
        """How often each file of ``family`` uses ``name`` (a name defined in several
        files is asked for by each of them)."""
        key = (name, family)
        found = self._uses.get(key)
        if found is None:
            paths, rows = self._index.reference_rows(name)
            found = self._uses[key] = Counter(
                path
                for path, row in zip(paths, rows, strict=True)
                if row[1] in USE_KINDS and family_of(path) == family
            )
        return found


def personalised_pagerank(
    ties: Callable[[str], Mapping[str, float]],
    seeds: Iterable[str],
    *,
    damping: float = DAMPING,
    tolerance: float = TOLERANCE,
    deadline: float | None = None,
) -> dict[str, float]:
    """Each file's PageRank with restarts at ``seeds``, by pushes from the seeds; a file
    passes its mass on once it holds ``tolerance`` per tie, and files the flow does not
    reach are left out (rank 0). A file tied to nothing keeps the mass that reaches it.
    Past ``deadline`` (a ``time.monotonic()`` value) no more mass is pushed."""
    start = sorted(set(seeds))
    if not start:
        return {}
    rank: dict[str, float] = defaultdict(float)
    residual: dict[str, float] = dict.fromkeys(start, 1.0 / len(start))
    queue = deque(start)
    queued = set(start)
    for _ in range(MAX_PUSHES):
        if not queue or (deadline is not None and time.monotonic() > deadline):
            break
        node = queue.popleft()
        queued.discard(node)
        out = ties(node)
        if residual[node] < tolerance * max(1, len(out)):
            continue  # too little to spread over its ties: the bound on the work done
        mass = residual.pop(node)
        total = sum(out.values())
        if total <= 0:
            rank[node] += mass
            continue
        rank[node] += (1 - damping) * mass
        for other, weight in out.items():
            left = residual.get(other, 0.0) + damping * mass * weight / total
            residual[other] = left
            if left > tolerance and other not in queued:
                queue.append(other)
                queued.add(other)
    return dict(rank)


def file_ranks(
    index: SymbolIndex, changed: Sequence[str], *, deadline: float | None = None
) -> dict[str, float]:
    """How closely each file is tied to the ``changed`` paths (absent: not at all), as
    far as the ranking got by ``deadline``."""
    return personalised_pagerank(Ties(index, deadline=deadline), changed, deadline=deadline)


def used_by_added(
    index: SymbolIndex, files: Sequence[FileDiff], ranks: dict[str, float]
) -> list[str]:
    """The names the added lines call or name as types that the repository defines
    somewhere the diff does not show, most relevant first."""
    shown = {f.path: f.right_lines for f in files}
    uses: dict[str, int] = defaultdict(int)
    families: dict[str, set[str | None]] = defaultdict(set)
    for file in sorted(files, key=lambda f: f.path):
        entry = index.files.get(file.path)
        if entry is None:
            continue
        added = file.added_lines
        for name, kind, line in entry.references:
            if kind in USE_KINDS and line in added:
                uses[name] += 1
                families[name].add(family_of(file.path))
    scores: dict[str, float] = {}
    for name, count in uses.items():
        places = [
            d
            for d in index.definitions(name)
            if d.line not in shown.get(d.path, frozenset()) and family_of(d.path) in families[name]
        ]
        if not places:
            continue  # not defined here (a library's), or the diff shows its definition
        tie = max(ranks.get(d.path, 0.0) for d in places)
        # Ties matter more than counts: a name used once from a closely tied file beats
        # one used three times whose definition is far away. Ambiguity divides.
        scores[name] = (1.0 + math.log(count)) * (tie + 1e-6) / math.sqrt(len(places))
    return sorted(scores, key=lambda n: (-scores[n], n))
