"""`gitneural replay` on the six shared real repositories (issue 33, point 3).

- **Mining later fixes** (:func:`bot.replay.history_golden.mine_history`): the changes of
  each repository's first-parent history (a merge: ``merge^1..merge^2``; any other commit:
  ``commit^..commit``) mined up to its head, in CPU seconds per 1,000 commits of that line
  (the machine is shared: wall time says more about the neighbours): its last 20 changes
  (a default ``replay``) and, without ``--quick``, every change of the history at once
  (blame then walks the whole history for every fix). Budget: at most 5 s per 1,000
  commits.
- **Golden items found** per repository, for each.

:func:`mining` is the measure each repository's rows come from; the replay of changes
against the stub adds its rows beside it in :func:`run`.

Needs the bundles (``GITNEURAL_REPO_BUNDLES`` or ``shared/fixtures/repos`` above the
checkout).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

from benchmarks.common import Row, main, row
from bot.replay.history_golden import mine_history
from bot.replay.items import GoldenItem, PastChange
from tests.support.real_repos import REPOSITORIES, checkout

BUDGET = 5.0
LAST = 20
QUICK_REPOSITORIES = ("gin", "cJSON")


def first_parent_changes(path: Path) -> list[PastChange]:
    """Each commit of the first-parent line of ``path``'s HEAD as a change, oldest first."""
    repo = pygit2.Repository(str(path))
    walker = repo.walk(repo.head.target, pygit2.enums.SortMode.TOPOLOGICAL)
    walker.simplify_first_parent()
    changes = []
    for c in walker:
        if not c.parents:
            continue
        base, head = (c.parents[0], c.parents[1]) if len(c.parents) > 1 else (c.parents[0], c)
        subject = c.message.split("\n", 1)[0]
        changes.append(PastChange(str(base.id), str(head.id), subject, commit=str(c.id)))
    return changes[::-1]


@dataclass
class Mined:
    name: str
    commits: int
    cpu_seconds: float
    items: dict[str, list[GoldenItem]]
    last_keys: list[str]

    @property
    def per_thousand(self) -> float:
        return 1000 * self.cpu_seconds / max(self.commits, 1)


def mining(name: str, last: int | None = None) -> Mined:
    """Mine the first-parent history of the shared repository ``name`` for all its
    changes, or for the ``last`` ones (the whole line is walked either way)."""
    path = checkout(name)
    changes = first_parent_changes(path)
    mined = changes[-last:] if last else changes
    started = time.process_time()
    items = mine_history(path, mined)
    cpu = time.process_time() - started
    return Mined(name, len(changes) + 1, cpu, items, [c.key for c in changes[-LAST:]])


def mining_rows(mined: Mined, label: str) -> list[Row]:
    """The rows of one mining: its CPU per 1,000 commits walked and the items found."""
    per = round(mined.per_thousand, 3)
    total = sum(len(v) for v in mined.items.values())
    return [
        row(
            f"replay mining, {mined.name} ({label}): CPU per 1,000 commits",
            per,
            "s",
            f"<= {BUDGET:g} s",
            per <= BUDGET,
        ),
        row(f"replay mining, {mined.name} ({label}): golden items", total, "items"),
    ]


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    for name in QUICK_REPOSITORIES if quick else REPOSITORIES:
        last = mining(name, LAST)
        rows.append(row(f"replay mining, {name}: first-parent commits", last.commits, "commits"))
        rows += mining_rows(last, f"last {LAST} changes")
        if not quick:
            rows += mining_rows(mining(name), "every change of the history")
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))
