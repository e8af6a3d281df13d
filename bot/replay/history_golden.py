"""Golden items mined from history (the SZZ idea): the lines a change added that a later
fixing commit modified or deleted, traced back to the change with blame.

A later commit counts when its message says it fixes something (:data:`DEFAULT_FIX_WORDS`,
whole words, any case) and the hunk it changed is more than whitespace or comments. Each
line it removed is blamed in the fixing commit's parent (libgit2 follows renames); a line
whose commit is one the change introduced (``base..head``) becomes part of a golden item,
placed at its line in the change's head by a second blame that stops at that head.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2

from bot.code.languages import language_of
from bot.errors import GitError
from bot.replay.items import GoldenItem, PastChange
from bot.replay.line_origins import LineOrigins

#: The words that make a commit a fix (issue 33): matched as whole words, in any case.
DEFAULT_FIX_WORDS: tuple[str, ...] = (
    "fix",
    "fixes",
    "fixed",
    "bug",
    "regression",
    "revert",
    "crash",
    "broken",
)

_WHITESPACE = re.compile(rb"\s+")
#: A line re-indented later is still the line the change added (renames are followed
#: by libgit2's blame itself).
_BLAME_FLAGS = pygit2.enums.BlameFlag.IGNORE_WHITESPACE


def fix_pattern(words: Sequence[str]) -> re.Pattern[str]:
    """The regular expression that finds any of ``words`` as a whole word, in any case."""
    alternatives = "|".join(re.escape(w) for w in words if w)
    return re.compile(rf"\b(?:{alternatives})\b" if alternatives else r"(?!)", re.IGNORECASE)


@dataclass(frozen=True)
class _Hunk:
    """The lines (in the fixing commit's parent) one substantive hunk of a fix removed."""

    old_path: str
    first: int
    last: int


def _code(path: str) -> Callable[[bytes], bytes]:
    """What of a line is code: its comment (the language's line comment, at the start or
    after a space: a heuristic that a marker inside a string can fool) and its
    whitespace removed."""
    language = language_of(path)
    if language is None:
        return lambda line: _WHITESPACE.sub(b"", line)
    comment = re.compile(rb"(?:^|\s)" + re.escape(language.comment.encode()) + rb".*", re.DOTALL)
    return lambda line: _WHITESPACE.sub(b"", comment.sub(b"", line))


def _substantive(path: str, removed: list[bytes], added: list[bytes]) -> bool:
    """Whether a hunk changes code: not only whitespace, and not only comments."""
    code = _code(path)
    return b"".join(map(code, removed)) != b"".join(map(code, added))


def _fix_hunks(repo: pygit2.Repository, parent: pygit2.Commit, fix: pygit2.Commit) -> list[_Hunk]:
    diff = parent.tree.diff_to_tree(fix.tree, context_lines=0)
    diff.find_similar()
    found: list[_Hunk] = []
    for patch in diff:
        if patch is None:
            continue
        delta = patch.delta
        if delta.status_char() == "A" or delta.is_binary:
            continue
        old_path = delta.old_file.path
        for hunk in patch.hunks:
            if hunk.old_lines == 0:
                continue  # only additions: no line of the past was touched
            removed = [ln.raw_content for ln in hunk.lines if ln.origin == "-"]
            added = [ln.raw_content for ln in hunk.lines if ln.origin == "+"]
            if _substantive(old_path, removed, added):
                last = hunk.old_start + hunk.old_lines - 1
                found.append(_Hunk(old_path, hunk.old_start, last))
    return found


def _ranges(lines: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Sorted line numbers as ``(first, last)`` runs of consecutive lines."""
    run: list[int] = []
    for n in sorted(set(lines)):
        if run and n != run[-1] + 1:
            yield run[0], run[-1]
            run = []
        run.append(n)
    if run:
        yield run[0], run[-1]


class _Miner:
    def __init__(self, repo: pygit2.Repository, changes: Sequence[PastChange]) -> None:
        self.repo = repo
        #: Each commit a change introduced → the changes that introduced it.
        self.owner: dict[str, list[PastChange]] = {}
        for change in changes:
            for sha in self._introduced(change):
                self.owner.setdefault(sha, []).append(change)

    def _introduced(self, change: PastChange) -> list[str]:
        try:
            walker = self.repo.walk(self.oid(change.head), pygit2.enums.SortMode.NONE)
            walker.hide(self.oid(change.base))
        except (KeyError, ValueError) as exc:
            raise GitError(
                f"replay: cannot walk {change.key}: {exc}; is it in this clone?"
            ) from exc
        return [str(c.id) for c in walker]

    def oid(self, rev: str) -> pygit2.Oid:
        return self.repo.revparse_single(rev).peel(pygit2.Commit).id

    def items_of_fix(
        self, fix: pygit2.Commit, after: set[str], oldest: pygit2.Oid | None
    ) -> Iterator[GoldenItem]:
        """The golden items one fixing commit makes; ``after`` holds the heads it follows,
        and blame stops at ``oldest`` (older lines are no change's)."""
        parent = fix.parents[0]
        subject = fix.message.split("\n", 1)[0].strip()
        for hunk in _fix_hunks(self.repo, parent, fix):
            by_change: dict[PastChange, list[int]] = {}
            blame = self.repo.blame(
                hunk.old_path,
                newest_commit=parent.id,
                flags=_BLAME_FLAGS,
                min_line=hunk.first,
                max_line=hunk.last,
                oldest_commit=oldest,
            )
            for bh in blame:
                if bh.boundary and oldest is not None:
                    continue
                for change in self.owner.get(str(bh.orig_commit_id), ()):
                    if change.head not in after:
                        continue
                    first = bh.final_start_line_number
                    rows = range(first, first + bh.lines_in_hunk)
                    by_change.setdefault(change, []).extend(
                        n for n in rows if hunk.first <= n <= hunk.last
                    )
            for change, lines in by_change.items():
                yield from self._at_head(change, hunk.old_path, parent, lines, fix, subject)

    def _at_head(
        self,
        change: PastChange,
        path: str,
        parent: pygit2.Commit,
        lines: list[int],
        fix: pygit2.Commit,
        subject: str,
    ) -> Iterator[GoldenItem]:
        """The lines (in ``parent``) placed in the change's head: a blame that stops there
        gives each line's path and number in the head."""
        head = self.oid(change.head)
        in_head: dict[str, list[int]] = {}
        for first, last in _ranges(lines):
            blame = self.repo.blame(
                path,
                newest_commit=parent.id,
                oldest_commit=head,
                flags=_BLAME_FLAGS,
                min_line=first,
                max_line=last,
            )
            for bh in blame:
                if bh.orig_commit_id != head:
                    continue  # changed again after the head: not a line of the change's head
                offset = bh.orig_start_line_number - bh.final_start_line_number
                rows = range(
                    bh.final_start_line_number, bh.final_start_line_number + bh.lines_in_hunk
                )
                in_head.setdefault(bh.orig_path or path, []).extend(
                    n + offset for n in rows if first <= n <= last
                )
        yield from _items(change, in_head, fix, subject)


def _follows(repo: pygit2.Repository, parent: pygit2.Oid, head: pygit2.Oid) -> bool:
    return parent == head or repo.descendant_of(parent, head)


def _items_forward(
    repo: pygit2.Repository,
    changes: Sequence[PastChange],
    line: list[pygit2.Commit],
    at: list[int],
    pattern: re.Pattern[str],
) -> dict[str, list[GoldenItem]]:
    """The golden items by the origins carried forward (:mod:`bot.replay.line_origins`),
    every change on the first-parent line at ``at``."""
    found: dict[str, list[GoldenItem]] = {c.key: [] for c in changes}
    origins = LineOrigins(repo, [(c.head, line[i].id) for c, i in zip(changes, at, strict=True)])
    start = min(at)
    for index in range(start, len(line)):
        commit = line[index]
        if index > start and pattern.search(commit.message):
            subject = commit.message.split("\n", 1)[0].strip()
            for hunk in _fix_hunks(repo, commit.parents[0], commit):
                by_change: dict[int, dict[str, list[int]]] = {}
                for origin in origins.origins(hunk.old_path, hunk.first, hunk.last):
                    if origin is not None:
                        places = by_change.setdefault(origin.change, {})
                        places.setdefault(origin.path, []).append(origin.line)
                for n, places in by_change.items():
                    found[changes[n].key] += _items(changes[n], places, commit, subject)
        origins.step(commit)
    return found


def _items(
    change: PastChange, in_head: dict[str, list[int]], fix: pygit2.Commit, subject: str
) -> Iterator[GoldenItem]:
    for head_path, numbers in in_head.items():
        for span in _ranges(numbers):
            yield GoldenItem(
                change=change.key,
                path=head_path,
                lines=span,
                text=f"fixed later by {str(fix.id)[:12]}: {subject}",
                source="history",
                fix_sha=str(fix.id),
                fix_subject=subject,
            )


def _oid(repo: pygit2.Repository, rev: str) -> pygit2.Oid:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit).id
    except (KeyError, ValueError) as exc:
        raise GitError(f"replay: cannot read {rev}: {exc}; is it in this clone?") from exc


def _on_the_line(
    repo: pygit2.Repository, changes: Sequence[PastChange], position: dict[pygit2.Oid, int]
) -> list[int] | None:
    """Each change's place on the first-parent line when every change is one commit of
    it (``c^..c``, or a merge's ``merge^1..merge^2``), each its own; else None."""
    placed: list[int] = []
    for c in changes:
        commit = repo.get(_oid(repo, c.commit or c.head))
        if not isinstance(commit, pygit2.Commit) or commit.id not in position:
            return None
        parents = [str(p) for p in commit.parent_ids]
        own = (
            [c.base, c.head] == parents[:2] if c.head != str(commit.id) else parents[:1] == [c.base]
        )
        if not own or position[commit.id] == 0:
            return None
        placed.append(position[commit.id])
    return placed if len(set(placed)) == len(placed) else None


def mine_history(
    repo_path: Path,
    changes: Sequence[PastChange],
    *,
    words: Sequence[str] = DEFAULT_FIX_WORDS,
    until: str = "HEAD",
) -> dict[str, list[GoldenItem]]:
    """Each change's golden items (by :attr:`PastChange.key`), from the fixing commits of
    the first-parent history up to ``until`` made after the change's head."""
    try:
        repo = pygit2.Repository(str(repo_path))
    except pygit2.GitError as exc:
        raise GitError(f"replay: {repo_path} is not a git repository: {exc}") from exc
    found: dict[str, list[GoldenItem]] = {c.key: [] for c in changes}
    if not changes:
        return found
    pattern = fix_pattern(words)
    walker = repo.walk(_oid(repo, until), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    line = [c for c in walker][::-1]
    position = {c.id: i for i, c in enumerate(line)}
    placed = _on_the_line(repo, changes, position)
    if placed is not None:
        # Every change a commit of the line: one diff per commit walked, no blame.
        return _items_forward(repo, changes, line, placed, pattern)
    miner = _Miner(repo, changes)
    # Where each change sits on the first-parent line (its merge, or its head): a fix
    # counts for the changes before it; a change off the line is asked of the graph.
    anchors = {c.head: position.get(miner.oid(c.commit or c.head)) for c in changes}
    heads = {c.head: miner.oid(c.head) for c in changes}
    # Blame need not look past the first change's base when it is on the line.
    bases = [position[b] for b in (miner.oid(c.base) for c in changes) if b in position]
    oldest = line[min(bases)].id if bases and min(bases) > 0 else None
    for index, commit in enumerate(line):
        if not commit.parents or not pattern.search(commit.message):
            continue
        after = {
            head
            for head, at in anchors.items()
            if (at is not None and at < index)
            or (at is None and _follows(repo, commit.parents[0].id, heads[head]))
        }
        if after:
            for item in miner.items_of_fix(commit, after, oldest):
                found[item.change].append(item)
    return found
