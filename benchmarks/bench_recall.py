"""Related-code recall on real commits of the six shared repositories (issue 22).

For each of the last :data:`COMMITS` commits of a repository that change source files (a
commit with one parent; quick mode: a few commits of two repositories), the review's own
plan (:func:`bot.review.plan.plan_review`, one-shot, default settings, so the
default ``related_max_tokens``) builds the prompt's related-code part twice:

- **before**: without the symbol index, the regex name probes walking the snapshot
  (what the review did before the index, and still does without the ``parsers`` extra);
- **after**: with the commit's symbol index (:class:`bot.code.index.SymbolIndex`, updated
  commit by commit from the previous one, as the entrances keep it).

What the prompt should hold is judged from the index, whatever the product chose:

- **definition recall**: the names called or named as types on added lines that are
  defined in another file of the repository (at a line the diff does not show); a name
  counts when one of its definitions is inside a snippet of the related part;
- **caller recall**: the functions and methods the commit modified (the innermost one
  around an added line at the commit, or around a removed line at the parent) that are
  called from another file (at a line the diff does not show); one counts when one of
  those calls is inside a snippet of the related part;
- **tokens** of the related part per review, and its time.

A snippet is located by the header :meth:`RepoTools.read_file` writes
(``path: lines S-E of N``). Targets (issue 22): definition recall at least 90%, caller
recall at least 80%, with the index.

Needs the ``parsers`` extra and the bundles (``GITNEURAL_REPO_BUNDLES`` or
``shared/fixtures/repos`` above the checkout).
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pygit2

from benchmarks.common import Row, row
from benchmarks.standalone import main
from bot.code.grammars import available, family_of, language_of
from bot.code.index import FileSymbols, SymbolIndex
from bot.domain.change import Change
from bot.domain.diff import FileDiff
from bot.git.repo import TreeSnapshot, range_change
from bot.review.plan import PlanOptions, plan_review
from bot.review.token_estimate import estimate_tokens
from bot.settings.repository import Config
from tests.support.real_repos import REPOSITORIES, checkout

COMMITS = 100
QUICK = {"gin": 4, "ky": 3}
LANGUAGE = {
    "gin": "Go",
    "ky": "TypeScript",
    "jsoup": "Java",
    "anyhow": "Rust",
    "sinatra": "Ruby",
    "cJSON": "C",
}
DEFINITION_TARGET = 90.0
CALLER_TARGET = 80.0
FUNCTIONS = frozenset({"function", "method", "constructor"})
_HEADER = re.compile(r"^(\S.*?): lines (\d+)-(\d+) of [\d,]+$", re.MULTILINE)


@dataclass
class Tally:
    wanted_definitions: int = 0
    found_definitions: int = 0
    wanted_callers: int = 0
    found_callers: int = 0
    tokens: list[int] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class Wanted:
    """What one commit's prompt should show: per name, the sites that would do."""

    definitions: dict[str, frozenset[tuple[str, int]]]
    callers: dict[str, frozenset[tuple[str, int]]]


def source_commits(repo: pygit2.Repository, count: int) -> list[pygit2.Commit]:
    """The last ``count`` commits with one parent that change a file a grammar reads,
    oldest first (each index is then updated from the one before)."""
    found: list[pygit2.Commit] = []
    for commit in repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL):
        if len(commit.parents) != 1:
            continue
        diff = commit.parents[0].tree.diff_to_tree(commit.tree)
        if any(_source(delta.new_file.path) for delta in diff.deltas):
            found.append(commit)
            if len(found) >= count:
                break
    return found[::-1]


def _source(path: str) -> bool:
    language = language_of(path)
    return language is not None and available(language)


def wanted(change: Change, index: SymbolIndex, parent: SymbolIndex) -> Wanted:
    shown = {f.path: f.right_lines for f in change.diff.files}

    def hidden(path: str, line: int) -> bool:
        return line not in shown.get(path, frozenset())

    definitions: dict[str, frozenset[tuple[str, int]]] = {}
    callers: dict[str, frozenset[tuple[str, int]]] = {}
    for file in change.diff.files:
        family = family_of(file.path)
        entry = index.files.get(file.path)
        added = file.added_lines
        if entry is not None:
            for name, kind, line in entry.references:
                if line not in added or kind not in ("call", "type") or name in definitions:
                    continue
                sites = {
                    (d.path, d.line)
                    for d in index.definitions(name)
                    if hidden(d.path, d.line) and family_of(d.path) == family
                }
                if any(path != file.path for path, _ in sites):
                    definitions[name] = frozenset(sites)
        modified = _innermost_functions(entry, added)
        old = parent.files.get(file.old_path or file.path)
        modified |= _innermost_functions(old, _deleted(file))
        for name in modified:
            calls = {
                (r.path, r.line)
                for r in index.references(name)
                if r.kind == "call"
                and r.path != file.path
                and hidden(r.path, r.line)
                and family_of(r.path) == family
            }
            if calls:
                callers[name] = frozenset(callers.get(name, frozenset()) | calls)
    return Wanted(definitions, callers)


def _deleted(file: FileDiff) -> frozenset[int]:
    return frozenset(
        line.old_no
        for hunk in file.hunks
        for line in hunk.lines
        if line.kind == "-" and line.old_no is not None
    )


def _innermost_functions(entry: FileSymbols | None, lines: frozenset[int]) -> set[str]:
    if entry is None or not lines:
        return set()
    names: set[str] = set()
    units = [(s, e, n) for n, k, _, s, e in entry.definitions if k in FUNCTIONS]
    for line in lines:
        around = [(e - s, n) for s, e, n in units if s <= line <= e]
        if around:
            names.add(min(around)[1])
    return names


def snippets(text: str) -> dict[str, list[tuple[int, int]]]:
    """The line ranges of each file the related part shows."""
    ranges: dict[str, list[tuple[int, int]]] = {}
    for match in _HEADER.finditer(text):
        ranges.setdefault(match[1], []).append((int(match[2]), int(match[3])))
    return ranges


def _shows(ranges: dict[str, list[tuple[int, int]]], sites: frozenset[tuple[str, int]]) -> bool:
    return any(lo <= line <= hi for path, line in sites for lo, hi in ranges.get(path, []))


def related_text(change: Change, index: SymbolIndex | None) -> tuple[str, float]:
    """The related-code part of the review's prompt(s), and the time the plan took."""
    started = time.perf_counter()
    plan = plan_review(
        change, Config(), PlanOptions(effort="low", related=True, symbol_index=index)
    )
    seconds = time.perf_counter() - started
    return "\n\n".join(g.extra_context for g in plan.groups if g.extra_context), seconds


def measure(tally: Tally, change: Change, want: Wanted, index: SymbolIndex | None) -> None:
    text, seconds = related_text(change, index)
    ranges = snippets(text)
    tally.wanted_definitions += len(want.definitions)
    tally.found_definitions += sum(_shows(ranges, s) for s in want.definitions.values())
    tally.wanted_callers += len(want.callers)
    tally.found_callers += sum(_shows(ranges, s) for s in want.callers.values())
    tally.tokens.append(estimate_tokens(text) if text else 0)
    tally.seconds.append(seconds)


def repository_tallies(name: str, count: int) -> Iterator[tuple[str, Tally]]:
    """("before", tally), ("after", tally) over ``count`` commits of ``name``."""
    repo = pygit2.Repository(str(checkout(name)))
    commits = source_commits(repo, count)
    before, after = Tally(), Tally()
    previous: SymbolIndex | None = None
    for commit in commits:
        parent_commit = commit.parents[0]
        parent = SymbolIndex.build(TreeSnapshot(repo, parent_commit), previous=previous)
        index = SymbolIndex.build(TreeSnapshot(repo, commit), previous=parent)
        previous = index
        change = range_change(repo, str(parent_commit.id), str(commit.id))
        want = wanted(change, index, parent)
        measure(before, change, want, None)
        measure(after, change, want, index)
    yield "before", before
    yield "after", after


def _share(found: int, total: int) -> float:
    return round(100 * found / total, 1) if total else 100.0


def _rows(label: str, stage: str, tally: Tally) -> list[Row]:
    definition = _share(tally.found_definitions, tally.wanted_definitions)
    caller = _share(tally.found_callers, tally.wanted_callers)
    judged = stage == "after"
    return [
        row(
            f"recall {label}, {stage}: definitions of names used by added lines",
            definition,
            "%",
            f">= {DEFINITION_TARGET:g}%" if judged else "",
            definition >= DEFINITION_TARGET if judged else None,
        ),
        row(
            f"recall {label}, {stage}: callers of modified functions",
            caller,
            "%",
            f">= {CALLER_TARGET:g}%" if judged else "",
            caller >= CALLER_TARGET if judged else None,
        ),
        row(
            f"recall {label}, {stage}: related-code tokens per review, mean",
            round(statistics.mean(tally.tokens), 1) if tally.tokens else 0.0,
            "tokens",
        ),
        row(
            f"recall {label}, {stage}: plan time per review, median",
            round(1000 * statistics.median(tally.seconds), 1) if tally.seconds else 0.0,
            "ms",
        ),
    ]


def run(quick: bool) -> list[Row]:
    plan = QUICK if quick else dict.fromkeys(REPOSITORIES, COMMITS)
    rows: list[Row] = []
    for name, count in plan.items():
        label = f"{LANGUAGE[name]} ({name})"
        tallies = dict(repository_tallies(name, count))
        after = tallies["after"]
        rows += [
            row(f"recall {label}: commits", len(after.tokens)),
            row(
                f"recall {label}: names to define (used, defined elsewhere)",
                after.wanted_definitions,
            ),
            row(f"recall {label}: modified functions with callers elsewhere", after.wanted_callers),
        ]
        rows += _rows(label, "before", tallies["before"]) + _rows(label, "after", after)
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))
