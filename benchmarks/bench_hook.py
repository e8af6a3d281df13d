"""The pre-commit hook's own cost: what a developer waits for besides the model.

On a small staged change (one Python file, one edited line) it times, each the median of
several runs in fresh processes:

- **start-up, no model**: inside one process, the hook path's imports, reading the staged
  change (``staged_target``) and building the prompt (trusted settings and
  ``plan_review``): everything before the network call. Budget: issue 4's 300 ms,
  restated in reference units (:mod:`benchmarks.reference`), in a tiny repository and
  in a large one (3,000 real files from
  :mod:`benchmarks.corpus`, one of them edited), where the up-front search for related
  code has a whole tree to choose from;
- the whole ``gitneural hook run`` process with no API key (it fails open when the first
  request would be sent, so it is the same work plus interpreter start and output);
- a **cached re-run**: ``gitneural hook run`` again on the same staged change, answered
  from the result cache (the model is a K3 stub that is asked once, for the first run);
- an empty commit (nothing staged), which must finish before any review code loads;
- the symbol index: that a hook run in the large repository without a saved index
  writes none (the hook only loads the index ``gitneural review`` leaves), and the
  start-up there once the commit's index is saved (loaded, the staged files read
  again, used by the related code);
- ``import openai`` alone, which the hook pays only when a request is really sent;
- a peer's start-up where it is installed: ``import pr_agent.cli`` in a fresh
  interpreter (pr-agent's own figure, 6.6 s, anchors the hook's budget), with the hook's
  start-up as a share of it; "not installed" otherwise. pr-agent pins old releases of
  packages GitNeural needs newer (openai, PyGithub, pytest), so it is best installed in
  an environment of its own, whose interpreter :data:`PEER_PYTHON_ENV` names.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pygit2

from benchmarks.common import Row, k3_stub, row, within_refs
from benchmarks.corpus import edited, source_files
from benchmarks.standalone import main
from bot.code.index import index_folder, repository_index
from bot.git.repo import snapshot_at
from tests.fakes.k3 import Reply
from tests.support.repos import commit, make_repo, stage

#: Budgets in reference units, from the runs of the 2-core development machine (1 ref is
#: there 0.33 s quiet, 0.39 s at a load average of 11, 1.1 s at 20 to 30): issue 4's 300 ms
#: and 500 ms made ratios with the room those runs showed. On a quiet machine 300 ms is
#: 0.8 to 0.9 ref, and the start-up measured 0.92 there (336 ms beside a reference of
#: 0.37 s): the limit is 1 ref.
STARTUP_REFS = 1.0
STARTUP_WHY = "2-core runs: 0.78 loaded, 0.92 quiet; was 300 ms"
#: A large repository's start-up: the same 300 ms budget, but the up-front search for
#: related code reads more of the tree, more so on a loaded machine (its WHY's ratios).
LARGE_STARTUP_REFS = 1.5
LARGE_STARTUP_WHY = "2-core runs: 1.19 loaded, 1.03 quiet; was 300 ms"
CACHED_REFS = 1.4
CACHED_WHY = "2-core runs: 1.29 loaded, 1.18 quiet; was 500 ms"
EMPTY_REFS = 0.85
EMPTY_WHY = "2-core runs: 0.76 loaded, 0.62 quiet; was 300 ms"
#: The peer whose start-up anchors the hook's: its command-line module, imported fresh.
PEER_MODULE = "pr_agent.cli"
#: The interpreter of the environment the peer is installed in, when not this one.
PEER_PYTHON_ENV = "GITNEURAL_BENCH_PEER_PYTHON"
REPEAT = 7
#: A quick run judges its times too, so they are medians of three, not one: one sample of
#: the start-up under ``taskset -c 0`` measured 0.87 to 1.18 ref on the same code.
QUICK_REPEAT = 3
LARGE_FILES = 3000
QUICK_LARGE_FILES = 30

BEFORE = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(40))
AFTER = BEFORE.replace("return x + 7\n", "return x - 7\n")
GITNEURAL = str(Path(sys.executable).parent / "gitneural")

#: Runs in a fresh interpreter inside the repository, after a line ``INDEXED = …``;
#: prints the phases in seconds. With ``INDEXED``, the commit's symbol index is saved
#: already and is loaded as the hook loads it (``hooks.pre_commit._warm_index``).
_PHASES = """
import json, time
t0 = time.perf_counter()
import bot.cli.main, bot.cli.hook_cmd, hooks.pre_commit, hooks.cache
from bot.settings.repository import trusted_config
from bot.review import PlanOptions, plan_review
from hooks.targets import open_repository, staged_target
t1 = time.perf_counter()
target = staged_target(open_repository("."))
change = target.change
t2 = time.perf_counter()
index = None
if INDEXED:
    from bot.code.index import warm_index
    index = warm_index(change.base_sha, target.git_dir)
    assert index is not None, "the symbol index should be warm"
    index = index.with_files(change.head, [f.path for f in change.diff.files])
t3 = time.perf_counter()
config = trusted_config(change.trusted)
plan = plan_review(change, config, PlanOptions(effort="low", symbol_index=index))
assert plan.files, "the staged change should be reviewed"
t4 = time.perf_counter()
phases = {"import": t1 - t0, "diff": t2 - t1, "prompt": t4 - t3}
print(json.dumps({**phases, "symbol index": t3 - t2} if INDEXED else phases))
"""


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    drop = ("KIMI_", "MOONSHOT_", "GITNEURAL_", "PRE_COMMIT", "GIT_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.pop("SKIP", None)
    env.update(GITNEURAL_DATA_DIR=str(data_dir), **extra)
    return env


def _wall(args: list[str], cwd: Path, env: dict[str, str], repeat: int) -> float:
    """Median wall time of a process, in milliseconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(args, cwd=cwd, env=env, capture_output=True, check=False, timeout=120)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _phases(
    cwd: Path, env: dict[str, str], repeat: int, *, indexed: bool = False
) -> dict[str, float]:
    script = f"INDEXED = {indexed}\n{_PHASES}"
    runs = []
    for _ in range(repeat):
        out = subprocess.run(
            [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True
        )
        if out.returncode != 0:
            raise RuntimeError(f"phase timing failed: {out.stderr.strip()[-500:]}")
        runs.append(json.loads(out.stdout))
    return {k: statistics.median(r[k] for r in runs) * 1000 for k in runs[0]}


def _repo(path: Path, staged: bool) -> Path:
    repo = make_repo(path)
    commit(repo, {"calc.py": BEFORE, "README.md": "calc\n"}, "initial")
    if staged:
        stage(repo, {"calc.py": AFTER})
    return path


def _large_repo(path: Path, count: int) -> Path:
    """``count`` real files committed, one line inside a function of one of them edited
    and staged (so the prompt has an enclosing function and related code). The files
    are under ``stdlib/``: none shadows a module for the phase script, which runs with
    the repository as its working directory."""
    files = source_files(count)
    repo = make_repo(path)
    commit(repo, {f.path: f.data for f in files}, "import sources")
    target = next(f for f in files if b"\n    def " in f.data)
    # Past the imports at the top: the statement in the middle of the file.
    middle = dataclasses.replace(target, anchors=target.anchors[len(target.anchors) // 2 :])
    stage(repo, {target.path: edited(middle, hunks=1, inserted=0)})
    return path


def _startup_rows(
    label: str, phases: dict[str, float], limit: float = STARTUP_REFS, why: str = STARTUP_WHY
) -> list[Row]:
    total = sum(phases.values())
    rows = [
        within_refs(
            f"hook start-up, {label} (import + diff + prompt)",
            total,
            "ms",
            limit,
            why,
        )
    ]
    return rows + [row(f"  of which {name}", ms, "ms") for name, ms in phases.items()]


def _index_rows(large: Path, count: int, env: dict[str, str], repeat: int) -> list[Row]:
    """The hook never builds a symbol index (``gitneural review`` leaves one in the git
    folder): none is written by a run without one; and the start-up when one is warm."""
    folder = index_folder(large / ".git")
    _wall([GITNEURAL, "hook", "run", "--quiet"], large, env, 1)
    written = len(list(folder.glob("*"))) if folder.exists() else 0
    rows = [
        row(
            f"hook run, {count:,}-file repository, no saved symbol index: indexes written",
            written,
            "",
            "0 (the hook only loads one)",
            written == 0,
        )
    ]
    repo = pygit2.Repository(str(large))
    head = str(repo.head.target)
    started = time.process_time()
    index = repository_index(snapshot_at(repo, "HEAD"), head, repo.path, seconds=600)
    built = time.process_time() - started
    if index is None:
        raise RuntimeError("the symbol index could not be built (is the parsers extra there?)")
    label = f"symbol index of the {count:,}-file repository, built once, CPU"
    rows.append(row(label, round(built, 2), "s"))
    phases = _phases(large, env, repeat, indexed=True)
    total = sum(phases.values())
    rows.append(row(f"hook start-up, {count:,}-file repository, warm symbol index", total, "ms"))
    return rows + [row(f"  of which {name}", ms, "ms") for name, ms in phases.items()]


def run(quick: bool = False) -> list[Row]:
    repeat = QUICK_REPEAT if quick else REPEAT
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-hook-") as tmp:
        root = Path(tmp)
        repo = _repo(root / "staged", staged=True)
        env = _env(root / "data")
        rows += _startup_rows("no model", _phases(repo, env, repeat))
        startup = float(rows[0]["value"])
        count = QUICK_LARGE_FILES if quick else LARGE_FILES
        large = _large_repo(root / "large", count)
        large_phases = _phases(large, env, repeat)
        rows += _startup_rows(
            f"{count:,}-file repository", large_phases, LARGE_STARTUP_REFS, LARGE_STARTUP_WHY
        )
        no_key = _wall([GITNEURAL, "hook", "run", "--quiet"], repo, env, repeat)
        rows.append(row("gitneural hook run process, no key (fails open)", no_key, "ms"))
        rows += _index_rows(large, count, env, repeat)

        reply = Reply(tool_calls=[("submit_review", {"summary": "Fine.", "findings": []})])
        with k3_stub(replies=[reply]) as stub:
            online = {**env, "KIMI_API_KEY": stub.api_key, "KIMI_BASE_URL": stub.base_url}
            first = _wall([GITNEURAL, "hook", "run", "--quiet"], repo, online, 1)
            cached = _wall([GITNEURAL, "hook", "run", "--quiet"], repo, online, repeat)
            asked = len(stub.chat_requests)
        rows.append(row("first run, K3 stub answering at once", first, "ms"))
        rows.append(
            within_refs(
                "cached re-run (same staged change)",
                cached,
                "ms",
                CACHED_REFS,
                f"{CACHED_WHY}; and the model asked once",
                asked == 1,
            )
        )

        empty = _repo(root / "empty", staged=False)
        nothing = _wall([GITNEURAL, "hook", "run", "--quiet"], empty, env, repeat)
        rows.append(
            within_refs("empty commit (nothing staged)", nothing, "ms", EMPTY_REFS, EMPTY_WHY)
        )
        sdk = _wall([sys.executable, "-c", "import openai"], root, env, repeat)
        bare = _wall([sys.executable, "-c", "pass"], root, env, repeat)
        rows.append(row("import openai (paid only when a request is sent)", sdk - bare, "ms"))
        rows.append(row("python start-up alone", bare, "ms"))
        rows += _peer_rows(root, env, repeat, startup)
    return rows


def _peer_rows(root: Path, env: dict[str, str], repeat: int, startup: float) -> list[Row]:
    """The peer's import in a fresh interpreter, and the hook's start-up as a share of
    it, when the peer is installed (in this environment, or in the one whose interpreter
    :data:`PEER_PYTHON_ENV` names)."""
    python = os.environ.get(PEER_PYTHON_ENV) or sys.executable
    where = "" if python == sys.executable else f", {PEER_PYTHON_ENV}"
    measure = f"peer: pr-agent start-up (import {PEER_MODULE}, fresh interpreter{where})"
    # Imported once first: a peer that is absent (or broken) is reported, not timed.
    probe = [python, "-c", f"import {PEER_MODULE}"]
    try:
        found = subprocess.run(probe, cwd=root, env=env, capture_output=True, check=False)
    except OSError:
        return [row(measure, f"not installed ({PEER_PYTHON_ENV} cannot be run)")]
    if found.returncode != 0:
        return [row(measure, "not installed")]
    peer = _wall(probe, root, env, repeat)
    return [
        row(measure, peer, "ms"),
        row("hook start-up, no model, as a share of the peer's", 100 * startup / peer, "%"),
    ]


if __name__ == "__main__":
    raise SystemExit(main(run))
