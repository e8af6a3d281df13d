"""`gitneural replay` on the six shared real repositories (issue 33, point 3).

- **Mining later fixes** (:func:`bot.replay.history_golden.mine_history`): the changes of
  each repository's first-parent history (a merge: ``merge^1..merge^2``; any other commit:
  ``commit^..commit``) mined up to its head, in CPU seconds per 1,000 commits of that line
  (the machine is shared: wall time says more about the neighbours): its last 20 changes
  (a default ``replay``) and, without ``--quick``, every change of the history at once
  (blame then walks the whole history for every fix). Budget: at most 5 s per 1,000
  commits.
- **Golden items found** per repository, for each.
- **A replay of its last 20 changes** (``gitneural replay --last 20``, the installed
  command; ``--commits`` where the first-parent line holds fewer than 20 merges) against
  the K3 stub answering at once with no findings, so the seconds per change are
  GitNeural's own, the model aside: wall time of the whole command (mining and planning
  included) and its CPU, per change.

:func:`mining` and :func:`replaying` are the measures each repository's rows come from.

Needs the bundles (``GITNEURAL_REPO_BUNDLES`` or ``shared/fixtures/repos`` above the
checkout).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from benchmarks.common import Row, row, within_refs
from benchmarks.standalone import main
from bot.replay.history_golden import mine_history
from bot.replay.items import GoldenItem, PastChange
from tests.support.real_repos import REPOSITORIES, checkout

#: Was 5 s, restated in reference units from the runs of the 2-core machine.
BUDGET_REFS = 15
BUDGET_WHY = "was 5 s of CPU, at 0.32 s of CPU per ref"
LAST = 20
QUICK_REPOSITORIES = ("gin", "cJSON")
#: Changes the quick run (the suite's own check) replays, of its first repository only.
QUICK_LAST = 2
GITNEURAL = str(Path(sys.executable).parent / "gitneural")


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
        within_refs(
            f"replay mining, {mined.name} ({label}): CPU per 1,000 commits",
            per,
            "s",
            BUDGET_REFS,
            BUDGET_WHY,
        ),
        row(f"replay mining, {mined.name} ({label}): golden items", total, "items"),
    ]


def _no_findings(body: dict[str, Any]) -> Any:
    from tests.fakes.k3 import Reply

    return Reply(
        reasoning="Nothing to say.",
        tool_calls=[("submit_review", {"summary": "Fine.", "findings": []})],
    )


def replaying(name: str, last: int = LAST) -> list[Row]:
    """``gitneural replay --last N`` on the shared repository ``name`` against the stub:
    wall and CPU seconds per change, the model aside (the stub answers at once)."""
    from tests.fakes.k3 import K3Stub

    path = checkout(name)
    merges = sum(1 for c in first_parent_changes(path) if c.commit != c.head)
    commits = merges < last
    args = [GITNEURAL, "replay", "--last", str(last), "--yes", "--format", "json", "--quiet"]
    args += ["--effort", "low", *(["--commits"] if commits else [])]
    with K3Stub(brain=_no_findings) as stub, tempfile.TemporaryDirectory() as data:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("KIMI_", "MOONSHOT_"))}
        env.update(KIMI_API_KEY=stub.api_key, KIMI_BASE_URL=stub.base_url)
        env["GITNEURAL_DATA_DIR"] = data
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(
            args, cwd=path, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        asked = len(stub.chat_requests)
    if done.returncode != 0:
        raise RuntimeError(f"replay of {name} failed: {done.stderr.strip()[-500:]}")
    report = json.loads(done.stdout)
    changes = report["totals"]["changes"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    what = f"replay, {name}: last {changes} {'commits' if commits else 'merges'}"
    return [
        row(f"{what}: model requests", asked, "requests"),
        row(f"{what}: golden items", report["totals"]["golden"], "items"),
        row(f"{what}: seconds per change, model aside", round(wall / changes, 3), "s"),
        row(f"{what}: CPU per change", round(cpu / changes, 3), "s"),
    ]


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    for name in QUICK_REPOSITORIES if quick else REPOSITORIES:
        last = mining(name, LAST)
        rows.append(row(f"replay mining, {name}: first-parent commits", last.commits, "commits"))
        rows += mining_rows(last, f"last {LAST} changes")
        if not quick:
            rows += mining_rows(mining(name), "every change of the history")
        if not quick or name == QUICK_REPOSITORIES[0]:
            rows += replaying(name, QUICK_LAST if quick else LAST)
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))
