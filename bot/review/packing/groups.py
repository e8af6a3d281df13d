"""Large changes: the files split into groups that each fit one prompt.

When a change does not fit the prompt's token budget, it is reviewed in parts. A part
should hold what a reviewer reads together, so files are first clustered by strong ties,
then the clusters are laid out in path order (which keeps a directory together) and cut
into groups that fit the budget:

- a **test and its module** (``tests/test_url.py`` with ``src/url.py``; ``url_test.go``
  with ``url.go``; ``url.spec.ts`` with ``url.ts``; ``UrlTest.java`` with ``Url.java``);
- **files that reference each other**: a file whose diff or context names another
  changed file's module (``from pkg import url``, ``require("./url")``, ``url.parse``).
  A name mentioned by many files (a hub such as ``utils``) ties nothing: it would pull
  the whole change into one cluster.

A cluster larger than the budget is cut in path order. A file too large for any prompt
on its own is skipped with its size, as :func:`bot.review.packing.fit.pack` does. The result
is deterministic: the same change gives the same groups, in the same order.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from bot.domain.results import SkippedFile
from bot.review.context.file_context import FileContext
from bot.review.packing.fit import file_cost, over_budget

__all__ = ["GROUP_LIMIT", "Group", "module_stem", "split_files"]

#: Reason for files left out because the change needs more than ``max_groups`` parts.
GROUP_LIMIT = "over the limit of {n} review parts for one change"
#: A module name mentioned by more files than this is a hub and ties nothing.
_HUB_MENTIONS = 8
#: Stems too common to tie files together.
_GENERIC_STEMS = frozenset(
    {"__init__", "__main__", "index", "main", "mod", "lib", "init", "setup", "conftest"}
)
_MIN_STEM = 3
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TEST_PATTERNS = (
    re.compile(r"^test_(.+)$"),
    re.compile(r"^(.+)_tests?$"),
    re.compile(r"^(.+)[._-](?:test|spec)$"),
    re.compile(r"^(.+[a-z0-9])Tests?$"),
    re.compile(r"^(.+[a-z0-9])Spec$"),
)


@dataclass
class Group:
    files: list[FileContext]
    #: Estimated tokens of the group's files (as packed: with context where it fits).
    tokens: int


def module_stem(path: str) -> tuple[str, bool]:
    """The module a file is about, and whether the file is a test of it.

    ``tests/test_url.py`` -> (``url``, True); ``src/url.py`` -> (``url``, False).
    """
    name = posixpath.basename(path)
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    # "url.test.ts": the part before the first dot is "url", the test marker follows it.
    rest = name[len(stem) :]
    marked = bool(re.match(r"\.(?:test|spec)\.", rest))
    if marked:
        return stem, True
    for pattern in _TEST_PATTERNS:
        found = pattern.match(stem)
        if found:
            return found.group(1), True
    in_test_dir = any(p in ("test", "tests", "spec", "__tests__") for p in path.split("/")[:-1])
    return stem, in_test_dir and stem not in _GENERIC_STEMS


class _Clusters:
    """Union-find over file indexes; the smallest index is each cluster's root."""

    def __init__(self, size: int) -> None:
        self._parent = list(range(size))

    def root(self, i: int) -> int:
        while self._parent[i] != i:
            self._parent[i] = self._parent[self._parent[i]]
            i = self._parent[i]
        return i

    def join(self, a: int, b: int) -> None:
        ra, rb = self.root(a), self.root(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)


def _common_prefix(a: str, b: str) -> int:
    return len(posixpath.commonpath([a, b])) if "/" in a and "/" in b else 0


def _tie_tests(paths: list[str], stems: list[tuple[str, bool]], clusters: _Clusters) -> None:
    modules: defaultdict[str, list[int]] = defaultdict(list)
    tests: list[tuple[int, str]] = []
    for i, (stem, is_test) in enumerate(stems):
        if len(stem) < _MIN_STEM:
            continue
        if is_test:
            tests.append((i, stem))
        else:
            modules[stem.lower()].append(i)
    for i, stem in tests:
        candidates = modules.get(stem.lower())
        if candidates:
            # Several modules of that name: the one nearest to the test in the tree.
            best = max(candidates, key=lambda j: (_common_prefix(paths[i], paths[j]), -j))
            clusters.join(i, best)


def _tie_references(
    files: Sequence[FileContext], stems: list[tuple[str, bool]], clusters: _Clusters
) -> None:
    owners: defaultdict[str, list[int]] = defaultdict(list)
    for i, (stem, is_test) in enumerate(stems):
        if not is_test and len(stem) >= _MIN_STEM and stem not in _GENERIC_STEMS:
            owners[stem].append(i)
    if not owners:
        return
    mentions: defaultdict[str, list[int]] = defaultdict(list)
    owned = set(owners)
    for i, item in enumerate(files):
        # Each word looked up in the stems: no set of every word, no copy of the stems.
        named = owned.intersection(_WORD.findall(item.diff_text))
        named.update(owned.intersection(_WORD.findall(item.context_text)))
        for stem in named:
            if i not in owners[stem]:
                mentions[stem].append(i)
    for stem, users in mentions.items():
        if len(users) > _HUB_MENTIONS or len(owners[stem]) > 2:
            continue
        for user in users:
            for owner in owners[stem]:
                clusters.join(user, owner)


def _fit(item: FileContext, budget: int) -> tuple[FileContext, int]:
    """The file as it will be packed: with its context if that fits a prompt alone."""
    cost = file_cost(item)
    if cost <= budget or not item.context_text:
        return item, cost
    bare = item.bare()
    return bare, file_cost(bare)


class _Layout:
    """Fills groups in order: a unit goes whole into the current group or a fresh one."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._groups: list[Group] = []
        self._current = Group([], 0)

    def _close(self) -> None:
        if self._current.files:
            self._groups.append(self._current)
            self._current = Group([], 0)

    def _add(self, item: FileContext, cost: int) -> None:
        self._current.files.append(item)
        self._current.tokens += cost

    def place(self, clusters: list[list[tuple[FileContext, int]]]) -> bool:
        """Put these clusters in one group if they fit one; False if they do not."""
        size = sum(c for cluster in clusters for _, c in cluster)
        if size > self._budget:
            return False
        if self._current.tokens + size > self._budget:
            self._close()
        for cluster in clusters:
            for item, cost in cluster:
                self._add(item, cost)
        return True

    def cut(self, cluster: list[tuple[FileContext, int]]) -> None:
        """A cluster too large for one group: its files in path order, cut where full."""
        for item, cost in cluster:
            if self._current.tokens + cost > self._budget:
                self._close()
            self._add(item, cost)

    def done(self) -> list[Group]:
        self._close()
        return self._groups


def split_files(
    files: Sequence[FileContext], budget: int, *, max_groups: int
) -> tuple[list[Group], list[SkippedFile]]:
    """Groups of related files, each within ``budget`` tokens, and the files left out."""
    fitted = [_fit(item, budget) for item in sorted(files, key=lambda f: f.file.path)]
    skipped = [SkippedFile(f.file.path, over_budget(c)) for f, c in fitted if c > budget]
    kept = [(f, c) for f, c in fitted if c <= budget]
    paths = [f.file.path for f, _ in kept]
    clusters = _Clusters(len(kept))
    stems = [module_stem(path) for path in paths]
    _tie_tests(paths, stems, clusters)
    _tie_references([f for f, _ in kept], stems, clusters)
    members: defaultdict[int, list[int]] = defaultdict(list)
    for i in range(len(kept)):
        members[clusters.root(i)].append(i)
    # Roots are the smallest index of each cluster: path order of their first file. The
    # clusters of one directory form a block that a group takes whole when it can.
    blocks: dict[str, list[list[tuple[FileContext, int]]]] = {}
    for root in sorted(members):
        cluster = [kept[i] for i in members[root]]
        blocks.setdefault(posixpath.dirname(paths[root]), []).append(cluster)
    layout = _Layout(budget)
    for block in blocks.values():
        if not layout.place(block):
            for cluster in block:
                if not layout.place([cluster]):
                    layout.cut(cluster)
    groups = layout.done()
    if len(groups) > max_groups:
        reason = GROUP_LIMIT.format(n=max_groups)
        skipped += [SkippedFile(f.file.path, reason) for g in groups[max_groups:] for f in g.files]
        groups = groups[:max_groups]
    return groups, skipped
