"""The tree-sitter layer on the six shared real repositories (issue 22).

- **Enclosing units against Universal Ctags**, every probe (the suite's test samples
  150 per language): the share of ctags definitions whose middle line gets ctags'
  innermost scope, or a unit nested in it (:mod:`tests.support.scope_judge`). Budget:
  97% in each language ctags gives end lines for (Go, Java, Ruby, C).
- **Cost of an outline** (one parse and the two queries of :mod:`bot.code.outline`) over
  every source file the grammars read in the six repositories, per 1,000 files and per
  MB, in CPU seconds (the machine is shared: wall time says more about the neighbours).
- **Symbol index**: a cold build of each repository's head (:class:`bot.code.index.
  SymbolIndex`, read from git), per 1,000 indexed files; and the update from the
  parent's index for each of gin's last commits, per commit. Targets (issue 22): cold
  at most 3 s per 1,000 files, update at most 200 ms per commit.

Needs the ``parsers`` extra, ``ctags`` and the bundles (``GITNEURAL_REPO_BUNDLES`` or
``shared/fixtures/repos`` above the checkout).
"""

from __future__ import annotations

import statistics
import time

import pygit2

from benchmarks.common import Row, main, row
from bot.code.grammars import language_of
from bot.code.index import SymbolIndex
from bot.code.outline import outline
from bot.git.repo import TreeSnapshot
from tests.support.real_repos import REPOSITORIES, checkout
from tests.support.scope_judge import JUDGED, judge

TARGET = 97.0
QUICK_SAMPLE = 40


def _agreement_rows(quick: bool) -> list[Row]:
    rows: list[Row] = []
    for language in sorted(JUDGED):
        started = time.perf_counter()
        result = judge(language, sample=QUICK_SAMPLE if quick else None)
        share = round(100 * result.share, 2)
        repository = JUDGED[language][0]
        rows += [
            row(f"enclosing units vs ctags, {language} ({repository}): probes", result.probes),
            row(
                f"enclosing units vs ctags, {language} ({repository}): agreement",
                share,
                "%",
                f">= {TARGET:g}%",
                share >= TARGET,
            ),
            row(
                f"enclosing units vs ctags, {language}: judge time",
                round(time.perf_counter() - started, 2),
                "s",
            ),
        ]
        if result.misses:
            rows.append(row(f"enclosing units vs ctags, {language}: first miss", result.misses[0]))
    return rows


def _cost_rows(quick: bool) -> list[Row]:
    files: list[tuple[str, bytes]] = []
    for name in REPOSITORIES:
        root = checkout(name)
        for path in sorted(root.rglob("*")):
            if ".git" in path.parts or not path.is_file() or language_of(path.name) is None:
                continue
            files.append((str(path.relative_to(root)), path.read_bytes()))
    if quick:
        files = files[:50]
    outline(*files[0])  # the grammar and its queries load once per process: not timed
    size = sum(len(data) for _, data in files)
    started = time.process_time()
    units = sum(len(found.units) for found in (outline(p, d) for p, d in files) if found)
    seconds = time.process_time() - started
    return [
        row("outline of every source file: files", len(files)),
        row("outline of every source file: MB", round(size / 1e6, 2), "MB"),
        row("outline of every source file: units found", units),
        row(
            "outline (parse + queries) per 1,000 files, CPU",
            round(seconds * 1000 / len(files), 2),
            "s",
        ),
        row("outline (parse + queries) per MB, CPU", round(seconds / (size / 1e6), 3), "s"),
    ]


def _snapshot(repo: pygit2.Repository, rev: str) -> TreeSnapshot:
    return TreeSnapshot(repo, repo.revparse_single(rev).peel(pygit2.Commit))


def _index_rows(quick: bool) -> list[Row]:
    files, cpu = 0, 0.0
    for name in REPOSITORIES[:2] if quick else REPOSITORIES:
        repo = pygit2.Repository(str(checkout(name)))
        started = time.process_time()
        index = SymbolIndex.build(_snapshot(repo, "HEAD"))
        cpu += time.process_time() - started
        files += len(index.files)
    cold = cpu * 1000 / max(1, files)
    repo = pygit2.Repository(str(checkout("gin")))
    commits = 3 if quick else 30
    previous = SymbolIndex.build(_snapshot(repo, f"HEAD~{commits}"))
    costs, parsed = [], []
    for back in range(commits - 1, -1, -1):
        started = time.process_time()
        previous = SymbolIndex.build(_snapshot(repo, f"HEAD~{back}"), previous=previous)
        costs.append(time.process_time() - started)
        parsed.append(previous.parsed)
    update = statistics.mean(costs) * 1000
    return [
        row("symbol index, cold: files indexed (six repositories)", files),
        row("symbol index, cold: per 1,000 files, CPU", round(cold, 2), "s", "<= 3 s", cold <= 3),
        row("symbol index, update: gin commits", commits),
        row("symbol index, update: files parsed per commit, mean", statistics.mean(parsed)),
        row(
            "symbol index, update: per commit, CPU, mean",
            round(update, 1),
            "ms",
            "<= 200 ms",
            update <= 200,
        ),
    ]


def run(quick: bool) -> list[Row]:
    return _agreement_rows(quick) + _cost_rows(quick) + _index_rows(quick)


if __name__ == "__main__":
    raise SystemExit(main(run))
