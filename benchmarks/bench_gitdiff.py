"""Exactly git's lines, on real history: GitNeural's diffs against ``git diff -M`` (issue 10).

The sample is real history of two kinds:

- **this repository's own commits** (every commit with one parent, up to ``MAX_OWN``);
- **real packages' source trees committed as history**: a package's source at one release
  replaced by another release, in place and moved under a new folder (a vendored
  upgrade). The old releases are those the interpreter's bundled pip and setuptools
  vendor, the new ones what this project installs.

For every commit it compares the files, their status and every hunk with what the local
``git`` prints (``tests/support/gitdiff.py``), and times the core's work on it without a
model: the diff (``range_change``) and the plan (``plan_review``). git changed one rule
of its rename scoring in 2.43.2 (the last line without a newline counts); GitNeural
follows today's git, and is compared here with the local git's rule (a row says which).

Budget: 100% of hunks identical to git's.
"""

from __future__ import annotations

import statistics
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pygit2

from benchmarks.common import REPO_ROOT, Row, row
from benchmarks.standalone import main
from bot.git import renames as gitrenames
from bot.git.repo import range_change
from bot.review import PlanOptions, plan_review
from bot.settings.repository import Config
from tests.support import gitdiff as check

MAX_OWN = 150
QUICK_OWN = 5
_PURELIB = Path(sysconfig.get_paths()["purelib"])
_STDLIB = Path(sysconfig.get_paths()["stdlib"])
PACKAGES = (
    ("distutils", _STDLIB / "distutils", _PURELIB / "setuptools" / "_distutils"),
    ("pyparsing", _PURELIB / "setuptools/_vendor/pyparsing", _PURELIB / "pip/_vendor/pyparsing"),
    ("urllib3", _PURELIB / "pip/_vendor/urllib3", _PURELIB / "urllib3"),
    ("requests", _PURELIB / "pip/_vendor/requests", _PURELIB / "requests"),
    ("pygments", _PURELIB / "pip/_vendor/pygments", _PURELIB / "pygments"),
    ("packaging", _PURELIB / "pip/_vendor/packaging", _PURELIB / "packaging"),
    ("idna", _PURELIB / "pip/_vendor/idna", _PURELIB / "idna"),
)


@dataclass
class Tally:
    commits: int = 0
    files: int = 0
    hunks: int = 0
    same_hunks: int = 0
    differing: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    def add(self, repo: pygit2.Repository, base: str, head: str, home: Path, label: str) -> None:
        started = time.perf_counter()
        change = range_change(repo, base, head)
        plan_review(change, Config(), PlanOptions(effort="max", related=False))
        self.seconds.append(time.perf_counter() - started)
        result = check.compare(change.diff, check.git_diff(repo, base, head, home))
        self.commits += 1
        self.files += result.files
        self.hunks += result.hunks
        self.same_hunks += result.same_hunks
        self.differing += [f"{label}: {d}" for d in result.differences]


def _own_history(tally: Tally, home: Path, limit: int) -> None:
    repo = pygit2.Repository(str(REPO_ROOT))
    for commit in repo.walk(repo.head.target):
        if tally.commits >= limit:
            break
        if len(commit.parents) == 1:
            tally.add(repo, str(commit.parents[0].id), str(commit.id), home, str(commit.id)[:12])


def _packages(tally: Tally, home: Path, quick: bool) -> None:
    repo = pygit2.init_repository(str(home / "packages.git"), bare=True)
    for name, old, new in PACKAGES[:1] if quick else PACKAGES:
        if not old.is_dir() or not new.is_dir():
            continue
        for moved in (False, True):
            base = check.commit_files(repo, check.tree_files(old, "lib/"))
            files = check.tree_files(new, "vendor/" if moved else "lib/")
            head = check.commit_files(repo, files, [base])
            tally.add(repo, base, head, home, f"{name}{' moved' if moved else ''}")


def run(quick: bool = False) -> list[Row]:
    final_line = check.local_git_counts_final_line()
    saved = gitrenames.COUNT_FINAL_LINE
    gitrenames.COUNT_FINAL_LINE = final_line
    try:
        with tempfile.TemporaryDirectory(prefix="gitneural-bench-gitdiff-") as tmp:
            own, packages = Tally(), Tally()
            _own_history(own, Path(tmp), QUICK_OWN if quick else MAX_OWN)
            _packages(packages, Path(tmp), quick)
    finally:
        gitrenames.COUNT_FINAL_LINE = saved
    rows: list[Row] = [
        row(
            "git compared with: last line without newline counts in renames",
            "yes" if final_line else "no (git < 2.43.2)",
        )
    ]
    for name, tally in (("own history", own), ("package upgrades", packages)):
        share = 100 * tally.same_hunks / tally.hunks if tally.hunks else 100.0
        rows += [
            row(f"git's lines, {name}: commits compared", tally.commits),
            row(f"git's lines, {name}: files compared", tally.files),
            row(f"git's lines, {name}: hunks compared", tally.hunks),
            row(
                f"git's lines, {name}: hunks identical to git's",
                round(share, 2),
                "%",
                "100%",
                tally.same_hunks == tally.hunks and not tally.differing,
            ),
            row(
                f"git's lines, {name}: core time per commit (diff + plan), median",
                statistics.median(tally.seconds) * 1000 if tally.seconds else 0.0,
                "ms",
            ),
            row(
                f"git's lines, {name}: core time per commit, slowest",
                max(tally.seconds, default=0.0) * 1000,
                "ms",
            ),
        ]
        if tally.differing:
            rows.append(row(f"git's lines, {name}: first difference", tally.differing[0][:200]))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(run))
