"""The tree-sitter layer on the six shared real repositories (issue 22).

- **Enclosing units against Universal Ctags**, every probe (the suite's test samples
  150 per language): the share of ctags definitions whose middle line gets ctags'
  innermost scope, or a unit nested in it (:mod:`tests.support.scope_judge`). Budget:
  97% in each language ctags gives end lines for (Go, Java, Ruby, C).
- **Cost of an outline** (one parse and the two queries of :mod:`bot.code.outline`) over
  every source file the grammars read in the six repositories, per 1,000 files and per
  MB: the work a cold symbol index would do per file.

Needs the ``parsers`` extra, ``ctags`` and the bundles (``GITNEURAL_REPO_BUNDLES`` or
``shared/fixtures/repos`` above the checkout).
"""

from __future__ import annotations

import time

from benchmarks.common import Row, main, row
from bot.code.grammars import language_of
from bot.code.outline import outline
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
    started = time.perf_counter()
    units = sum(len(found.units) for found in (outline(p, d) for p, d in files) if found)
    seconds = time.perf_counter() - started
    return [
        row("outline of every source file: files", len(files)),
        row("outline of every source file: MB", round(size / 1e6, 2), "MB"),
        row("outline of every source file: units found", units),
        row(
            "outline (parse + queries) per 1,000 files", round(seconds * 1000 / len(files), 2), "s"
        ),
        row("outline (parse + queries) per MB", round(seconds / (size / 1e6), 3), "s"),
    ]


def run(quick: bool) -> list[Row]:
    return _agreement_rows(quick) + _cost_rows(quick)


if __name__ == "__main__":
    raise SystemExit(main(run))
