"""The burst of issue 7 (item 4), shared by ``test_burst.py`` and ``benchmarks/bench_burst.py``.

    with BurstRig(tmp_path) as rig:              # fake GitHub + K3 stub, own processes
        result = rig.run(BurstPlan())            # gitneural serve + a second worker
        assert result.problems() == []

The App runs as deployed. ``broker="sqlite"`` (one machine): ``gitneural serve --workers
2`` (gunicorn with two web workers, the embedded SQLite broker and its review worker) plus
one more ``gitneural worker -Q reviews`` on the same data directory; ``"redis"``:
``gitneural serve --workers 2`` for the web only and two ``gitneural worker`` processes.
Either way two worker processes compete for every PR. The fake GitHub and the K3 stub
(answering at once) run in processes of their own, so the sender measures the App, not
its neighbours.

The plan (``check.BurstPlan``): ``prs`` pull requests; round 0 delivers ``opened``
for each, every later round pushes a new head to each PR on the fake GitHub and then
delivers its ``synchronize`` (``send``). Some synchronize events are sent again for
the same head with a new delivery id and a newer ``updated_at`` (GitHub repeating an
event; the same bytes under a new id would be a replay, never queued), and ``redeliveries``
deliveries are sent again with the same id and body, half racing their original and
half rounds later. The result is checked by ``check.BurstResult.problems``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
from collections import Counter, defaultdict
from pathlib import Path

from tests.fakes.github import FakeGitHubClient
from tests.support.burst.check import BurstPlan, BurstResult
from tests.support.burst.send import Sender
from tests.support.deployments import broker_env
from tests.support.paths import ROOT
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.rabbit import rabbit_vhost
from tests.support.services import (
    CONFIG,
    REPO,
    GitNeuralProcess,
    drop_redis_keys,
    free_port,
    require_redis,
    stop_together,
    submit_reply,
    unique_prefix,
    wait_for,
)
from tests.support.webhooks import SECRET, http_get

OUTCOME = re.compile(r"review job delivery=(\S+) .* outcome=(\S+) review=")
PULL_PATH = re.compile(rf"/repos/{REPO}/pulls/(\d+)")
REVIEWS_PATH = re.compile(rf"/repos/{REPO}/pulls/(\d+)/reviews")


# -- the processes ----------------------------------------------------------------------


def _start(
    command: list[str], log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class BurstRig:
    """The fake GitHub and the K3 stub, each in its own process, and the repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._procs: list[subprocess.Popen[bytes]] = []
        self.branches: dict[int, str] = {}
        self._fake_log = root / "fakegithub.log"

    def __enter__(self) -> BurstRig:
        self.root.mkdir(parents=True, exist_ok=True)
        state = self.root / "gh"
        state.mkdir(exist_ok=True)
        try:
            fake = _start(
                [sys.executable, "-m", "tests.fakes.github", "--state-dir", str(state)],
                self._fake_log,
            )
            self._procs.append(fake)
            wait_for(lambda: (state / "fakegithub.json").exists(), "the fake GitHub", 60)
            self.gh = FakeGitHubClient.from_state_dir(state)
            self.key_path = json.loads((state / "fakegithub.json").read_text())["private_key_path"]
            stub_log = self.root / "k3stub.log"
            self._procs.append(
                _start([sys.executable, "-m", "tests.support.burst.rig", "--k3stub"], stub_log)
            )
            found = wait_for(
                lambda: re.search(r"K3STUB_READY (\S+)", stub_log.read_text()), "the K3 stub", 60
            )
            self.k3_url = found.group(1)
            self.gh.create_repo(
                REPO,
                installation_id=1,
                files={"people.py": ORIGINAL, "README.md": "# app\n", ".gitneural.toml": CONFIG},
            )
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in reversed(self._procs):
            _stop(proc)

    def env(self, data_dir: Path) -> dict[str, str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITNEURAL_", "GITHUB_", "KIMI_", "MOONSHOT_"))
        }
        return {
            **base,
            "GITHUB_APP_ID": str(self.gh.app_id),
            "GITHUB_PRIVATE_KEY_PATH": self.key_path,
            "GITHUB_API_URL": self.gh.api_url,
            "KIMI_API_KEY": STUB_KEY,
            "KIMI_BASE_URL": self.k3_url,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITNEURAL_BOT_LOGIN": self.gh.bot_login,
            "GITNEURAL_DATA_DIR": str(data_dir),
            "GITNEURAL_GITHUB_PACING": "false",
            "GITNEURAL_BROKER_POLL_INTERVAL": "0.1",
            "GITNEURAL_LOCK_RETRY_DELAY": "0.5",
            "GITNEURAL_LOCK_LEASE": "15",
            "GITNEURAL_RETRY_BACKOFF": "0.5",
            "GITNEURAL_RETRY_BACKOFF_MAX": "5",
            "GITNEURAL_SHUTDOWN_GRACE": "5",
        }

    def pull(self) -> int:
        """A new PR planting the bug, on a branch of its own."""
        branch = f"burst-{len(self.branches) + 1}"
        self.gh.push(REPO, branch, {"people.py": PLANTED}, "Tighten is_adult")
        number = int(self.gh.create_pull(REPO, head=branch, title=f"Burst {branch}"))
        self.branches[number] = branch
        return number

    def run(self, plan: BurstPlan, broker: str = "sqlite") -> BurstResult:
        """Serve the App, send the burst, wait for every job to end, and collect.

        ``broker="sqlite"``: ``gitneural serve`` runs the web and a review worker on the
        embedded broker, and a second worker joins it. ``"redis"`` and ``"rabbitmq"`` (a
        vhost of its own, the state in Redis): the deployment of several machines,
        ``gitneural serve`` for the web only and two workers."""
        with contextlib.ExitStack() as outer:
            url = outer.enter_context(rabbit_vhost()) if broker == "rabbitmq" else None
            try:
                return self._run(plan, broker, url)
            except (urllib.error.URLError, ConnectionError) as exc:
                # A full run once met "Connection refused" from the fake GitHub mid-burst;
                # its log is deleted with the run, so say here whether it was still alive.
                raise RuntimeError(
                    f"the fake GitHub failed a call ({exc}): {self._fake_state()}"
                ) from exc

    def _fake_state(self) -> str:
        fake = self._procs[0]
        code = fake.poll()
        alive = "still running" if code is None else f"exited with status {code}"
        log = self._fake_log
        tail = log.read_text("utf-8", "replace")[-1500:] if log.exists() else "(no log)"
        return f"its process {alive}; the end of its log:\n{tail}"

    def _run(self, plan: BurstPlan, broker: str, url: str | None) -> BurstResult:
        pulls = [self.pull() for _ in range(plan.prs)]
        run_dir = self.root / f"run-{broker}-{time.monotonic_ns()}"
        run_dir.mkdir(parents=True)
        env = self.env(run_dir / "data")
        client = None
        if broker in ("redis", "rabbitmq"):
            client = require_redis()
            env.update(broker_env(broker, url), GITNEURAL_QUEUE_PREFIX=unique_prefix())
        port = free_port()
        serve = GitNeuralProcess(
            ["serve", "--port", str(port), "--workers", "2"], env, run_dir / "serve.log"
        )
        workers = [
            GitNeuralProcess(["worker", "-Q", "reviews"], env, run_dir / f"worker-{i}.log")
            for i in range(2 if client else 1)
        ]
        procs = [serve, *workers]
        try:
            with contextlib.ExitStack() as stack:
                for proc in procs:
                    stack.enter_context(proc)
                stack.callback(stop_together, procs)
                if client is None:
                    serve.wait_log("ready.", count=2, timeout=90)  # its review and fast workers
                for worker in workers:
                    worker.wait_log("ready.", timeout=90)
                wait_for(lambda: _healthy(port), "GET /healthz", 60)
                return self._burst(plan, pulls, port, procs)
        finally:
            if client is not None:
                drop_redis_keys(client, env["GITNEURAL_QUEUE_PREFIX"])

    def _burst(
        self, plan: BurstPlan, pulls: list[int], port: int, procs: list[GitNeuralProcess]
    ) -> BurstResult:
        sender = Sender(self.gh, self.branches, plan, pulls, port)
        started = time.monotonic()
        answers = asyncio.run(sender.burst())
        burst_seconds = time.monotonic() - started
        queued = sum(1 for a in answers if (a.status, a.answer) == (202, "queued"))

        def ended() -> Counter[str]:
            for proc in procs:
                if not proc.alive():
                    raise AssertionError(f"a GitNeural process exited:\n{proc.log()[-3000:]}")
            found = [m.group(2) for p in procs for m in OUTCOME.finditer(p.log())]
            return Counter(found) if len(found) >= queued else Counter()

        outcomes = wait_for(ended, f"{queued} jobs to end", plan.settle_timeout, 0.5)
        settle_seconds = time.monotonic() - started - burst_seconds
        logs = "".join(p.log() for p in procs)
        checks = self.gh.check_runs(REPO)
        return BurstResult(
            plan=plan,
            answers=answers,
            pushes=sender.pushes,
            heads=sender.heads,
            outcomes=outcomes,
            reviews=self._reviews(pulls),
            reads=self._reads(pulls),
            burst_seconds=burst_seconds,
            settle_seconds=settle_seconds,
            forbidden=len(self.gh.forbidden_requests()),
            unfinished_checks=sum(1 for c in checks if c["status"] != "completed"),
            log_errors=[line for line in logs.splitlines() if "outcome=failed" in line],
        )

    def _reviews(self, pulls: list[int]) -> dict[int, list[tuple[str, float]]]:
        posted: dict[int, list[tuple[str, float]]] = defaultdict(list)
        for r in self.gh.requests("POST", f"/repos/{REPO}/pulls/*/reviews"):
            found = REVIEWS_PATH.fullmatch(r.path)
            if found and int(found.group(1)) in pulls and r.status == 200 and r.json:
                posted[int(found.group(1))].append((r.json["commit_id"], r.time))
        return dict(posted)

    def _reads(self, pulls: list[int]) -> dict[int, list[tuple[float, float]]]:
        reads: dict[int, list[tuple[float, float]]] = defaultdict(list)
        for r in self.gh.requests("GET", f"/repos/{REPO}/pulls/*"):
            found = PULL_PATH.fullmatch(r.path)
            if found and int(found.group(1)) in pulls and r.status == 200:
                reads[int(found.group(1))].append((r.time, r.done_at))
        return dict(reads)


def _healthy(port: int) -> bool:
    try:
        return http_get(f"127.0.0.1:{port}", "/healthz").status == 200
    except OSError:
        return False


# -- the K3 stub's process --------------------------------------------------------------

STUB_KEY = "sk-burst-stub-key-0123456789"


def _serve_stub() -> int:
    """A K3 stub that answers every request at once with the planted bug's finding."""
    from tests.fakes.k3 import K3Stub

    stub = K3Stub(
        brain=lambda body: submit_reply(PLANTED_BUG), check_history=False, api_key=STUB_KEY
    )
    with stub, contextlib.suppress(KeyboardInterrupt):
        print(f"K3STUB_READY {stub.base_url}", flush=True)
        threading.Event().wait()  # until terminated
    return 0


if __name__ == "__main__" and sys.argv[1:] == ["--k3stub"]:
    sys.exit(_serve_stub())
