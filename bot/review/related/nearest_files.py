"""The files of a snapshot nearest to a change first: the order related code is searched in.

Callers and definitions of what a change touches are most often close to it: in the
same directory, then in the package around it. Searching in that order lets a search
bounded in bytes (so that its results do not depend on the machine's speed) spend its
budget where answers are likely.

The distance of a directory is the number of steps from the directory of the nearest
changed file: up to their common ancestor, then down. Directories are visited in order
of distance, then of steps down (the parent package before a subpackage), then of path;
files in a directory by name. The tree is explored outwards from the change, one
``list_dir`` at a time, so a caller that stops early (the byte bound) never pays for
listing the rest of a 100,000-file repository.
"""

from __future__ import annotations

import heapq
import posixpath
from collections.abc import Iterable, Iterator

from bot.domain.change import Snapshot

__all__ = ["nearest_files"]


def nearest_files(snapshot: Snapshot, changed: Iterable[str]) -> Iterator[tuple[str, int | None]]:
    """``(path, size)`` of every regular file, nearest to the ``changed`` paths first.

    Without changed paths the search starts at the root.
    """
    # (distance, steps down, directory): Dijkstra over the directory tree, where a step
    # up costs (1, 0) and a step down (1, 1).
    frontier = sorted({(0, 0, posixpath.dirname(path)) for path in changed}) or [(0, 0, "")]
    heapq.heapify(frontier)
    seen: set[str] = set()
    while frontier:
        distance, down, directory = heapq.heappop(frontier)
        if directory in seen:
            continue
        seen.add(directory)
        for entry in snapshot.list_dir(directory):
            path = f"{directory}/{entry.name}" if directory else entry.name
            if entry.kind == "file":
                yield path, entry.size
            elif entry.kind == "dir" and path not in seen:
                heapq.heappush(frontier, (distance + 1, down + 1, path))
        if directory:
            parent = posixpath.dirname(directory)
            if parent not in seen:
                heapq.heappush(frontier, (distance + 1, down, parent))
