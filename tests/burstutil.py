"""The burst of issue 7 (item 4), shared by ``test_burst.py`` and ``benchmarks/bench_burst.py``.

    with BurstRig(tmp_path) as rig:              # fake GitHub + K3 stub, own processes
        result = rig.run(BurstPlan())            # gitneural serve + a second worker
        assert result.problems() == []

The App runs as deployed on one machine: ``gitneural serve --workers 2`` (gunicorn with
two web workers, the embedded SQLite broker and its review worker) plus one more
``gitneural worker -Q reviews`` on the same data directory, so two worker processes
compete for every PR. The fake GitHub and the K3 stub (answering at once) run in
processes of their own, so the load generator here measures the App, not its neighbours.

The plan: ``prs`` pull requests; round 0 delivers ``opened`` for each, every later round
pushes a new head to each PR on the fake GitHub and then delivers its ``synchronize``.
Some synchronize events are sent again for the same head with a new delivery id (GitHub
repeating an event), and ``redeliveries`` deliveries are sent again with the same id and
body, half at once (racing the original) and half rounds later. Deliveries of a round
go out over ``concurrency`` connections, one request per connection, as GitHub's do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from fakegithub import FakeGitHubClient
from services import (
    CONFIG,
    ORIGINAL,
    PLANTED,
    PLANTED_BUG,
    REDIS_URL,
    REPO,
    GitNeuralProcess,
    drop_redis_keys,
    free_port,
    require_redis,
    submit_reply,
    unique_prefix,
    wait_for,
)
from webutil import SECRET, headers_for, http_get, variant

TESTS = Path(__file__).resolve().parent
#: GitHub's limit for a webhook answer.
ANSWER_LIMIT = 10.0
OUTCOME = re.compile(r"review job delivery=(\S+) .* outcome=(\S+) review=")
PULL_PATH = re.compile(rf"/repos/{REPO}/pulls/(\d+)")
REVIEWS_PATH = re.compile(rf"/repos/{REPO}/pulls/(\d+)/reviews")


@dataclass(frozen=True)
class BurstPlan:
    prs: int = 50
    #: Heads per PR: ``opened``, then ``rounds - 1`` pushes with their ``synchronize``.
    rounds: int = 15
    #: ``synchronize`` sent again for the same head with a new delivery id.
    repeats: int = 50
    #: Deliveries sent again with the same ``X-GitHub-Delivery`` and body.
    redeliveries: int = 200
    concurrency: int = 16
    #: Seconds from one round's start to the next: workers review heads in between, so
    #: new heads arrive while reviews of older ones run.
    round_gap: float = 3.0
    seed: int = 7
    #: Seconds to wait after the burst for every queued job to end.
    settle_timeout: float = 240.0

    @property
    def total(self) -> int:
        return self.prs * self.rounds + self.repeats + self.redeliveries


@dataclass(frozen=True)
class Delivery:
    id: str
    kind: str  # opened | synchronize | repeat | redelivery
    pr: int
    head: str
    body: bytes


@dataclass
class Answer:
    delivery: Delivery
    status: int | None
    answer: str | None
    latency: float


@dataclass(frozen=True)
class Push:
    pr: int
    sha: str
    started: float
    done: float


@dataclass
class BurstResult:
    plan: BurstPlan
    answers: list[Answer]
    pushes: list[Push]
    #: Per PR: the head it started with, then its later heads in order.
    heads: dict[int, list[str]]
    outcomes: Counter[str]
    #: Per PR: the commit of every review posted, with the POST's time.
    reviews: dict[int, list[tuple[str, float]]]
    #: Per PR: (sent, answered) times of every read of the PR (``GET pulls/N``).
    reads: dict[int, list[tuple[float, float]]]
    burst_seconds: float
    settle_seconds: float
    forbidden: int
    #: GitNeural check runs left ``in_progress`` after every job ended.
    unfinished_checks: int
    log_errors: list[str] = field(default_factory=list)

    # -- measures ------------------------------------------------------------------------

    def latencies(self) -> list[float]:
        return sorted(a.latency for a in self.answers if a.status is not None)

    def percentile(self, q: float) -> float:
        """Nearest-rank percentile (0..100) of the answered deliveries' latencies, in s."""
        values = self.latencies()
        rank = max(1, math.ceil(q / 100 * len(values)))
        return values[min(rank, len(values)) - 1]

    def reviews_per_head(self) -> Counter[tuple[int, str]]:
        return Counter((pr, sha) for pr, posted in self.reviews.items() for sha, _ in posted)

    def stale_reviews(self) -> list[str]:
        """Reviews of a head that was not the PR's head when the job last read the PR."""
        stale = []
        for pr, posted in self.reviews.items():
            windows = self._head_windows(pr)
            for sha, when in posted:
                before = [r for r in self.reads.get(pr, []) if r[1] <= when]
                if not before:
                    stale.append(f"PR {pr}: review of {sha[:12]} without a read of the PR")
                    continue
                sent, answered = max(before, key=lambda r: r[1])
                start, end = windows.get(sha, (0.0, -1.0))
                if not (start <= answered and sent <= end):
                    stale.append(f"PR {pr}: {sha[:12]} was not the head when it was reviewed")
        return stale

    def _head_windows(self, pr: int) -> dict[str, tuple[float, float]]:
        """When each head may have been the PR's head (widened by the push's own time)."""
        pushes = [p for p in self.pushes if p.pr == pr]
        shas = self.heads[pr]
        starts = [float("-inf")] + [p.started for p in pushes]
        ends = [p.done for p in pushes] + [float("inf")]
        return {sha: (starts[i], ends[i]) for i, sha in enumerate(shas)}

    def problems(self) -> list[str]:
        """Every broken promise of the burst, in words; ``[]`` when all hold."""
        found = []
        unanswered = [a for a in self.answers if a.status is None]
        not_2xx = [a for a in self.answers if a.status is not None and not 200 <= a.status < 300]
        late = [a for a in self.answers if a.latency >= ANSWER_LIMIT]
        if len(self.answers) != self.plan.total:
            found.append(f"{len(self.answers)} deliveries sent, {self.plan.total} planned")
        if unanswered or not_2xx or late:
            found.append(
                f"{len(unanswered)} unanswered, {len(not_2xx)} not 2xx "
                f"({Counter(a.status for a in not_2xx)}), {len(late)} slower than 10 s"
            )
        queued: Counter[str] = Counter(a.delivery.id for a in self.answers if a.status == 202)
        ids = {a.delivery.id for a in self.answers}
        twice = [i for i in ids if queued[i] > 1]
        never = [i for i in ids if queued[i] == 0]
        if twice or never:
            found.append(f"delivery ids queued twice: {twice[:5]}, never: {never[:5]}")
        if self.outcomes["failed"]:
            found.append(f"{self.outcomes['failed']} job(s) failed: {self.log_errors[:3]}")
        doubles = [
            f"PR {pr} {sha[:12]}" for (pr, sha), n in self.reviews_per_head().items() if n > 1
        ]
        if doubles:
            found.append(f"heads reviewed more than once: {doubles[:5]}")
        newest = [pr for pr, heads in self.heads.items() if heads[-1] not in
                  {sha for sha, _ in self.reviews.get(pr, [])}]  # fmt: skip
        if newest:
            found.append(f"PRs whose newest head has no review: {newest[:10]}")
        found += self.stale_reviews()[:5]
        if self.unfinished_checks:
            found.append(f"{self.unfinished_checks} check run(s) left in progress")
        if self.forbidden:
            found.append(f"{self.forbidden} request(s) wrote to a repository or approved")
        return found


# -- the processes ----------------------------------------------------------------------


def _start(
    command: list[str], log: Path, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=TESTS, stdout=out, stderr=subprocess.STDOUT, env=env)


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

    def __enter__(self) -> BurstRig:
        self.root.mkdir(parents=True, exist_ok=True)
        state = self.root / "gh"
        state.mkdir(exist_ok=True)
        try:
            fake = _start([sys.executable, "fakegithub.py", "--state-dir", str(state)],
                          self.root / "fakegithub.log")  # fmt: skip
            self._procs.append(fake)
            wait_for(lambda: (state / "fakegithub.json").exists(), "the fake GitHub", 60)
            self.gh = FakeGitHubClient.from_state_dir(state)
            self.key_path = json.loads((state / "fakegithub.json").read_text())["private_key_path"]
            stub_log = self.root / "k3stub.log"
            self._procs.append(_start([sys.executable, __file__, "--k3stub"], stub_log))
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
        embedded broker, and a second worker joins it. ``"redis"``: the deployment of
        several machines, ``gitneural serve`` for the web only and two workers."""
        pulls = [self.pull() for _ in range(plan.prs)]
        run_dir = self.root / f"run-{broker}-{time.monotonic_ns()}"
        run_dir.mkdir(parents=True)
        env = self.env(run_dir / "data")
        client = None
        if broker == "redis":
            client = require_redis()
            env.update(GITNEURAL_BROKER_URL=REDIS_URL, GITNEURAL_QUEUE_PREFIX=unique_prefix())
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
        sender = _Sender(self, plan, pulls, port)
        started = time.monotonic()
        answers = asyncio.run(sender.burst())
        burst_seconds = time.monotonic() - started
        queued = sum(1 for a in answers if a.status == 202)

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


# -- the burst --------------------------------------------------------------------------


class _Sender:
    def __init__(self, rig: BurstRig, plan: BurstPlan, pulls: list[int], port: int) -> None:
        self.rig, self.plan, self.pulls, self.port = rig, plan, pulls, port
        self.random = random.Random(plan.seed)
        self.heads = {n: [rig.gh.head_sha(REPO, n)] for n in pulls}
        self.pushes: list[Push] = []
        self.sent: list[Delivery] = []
        self._ids = 0
        # Which (round, PR) repeat their synchronize, and when redeliveries go out.
        later = [(r, n) for r in range(1, plan.rounds) for n in pulls]
        self.repeat_at = set(self.random.sample(later, plan.repeats))
        self.redeliver_at: dict[int, int] = Counter(
            self.random.randrange(plan.rounds) for _ in range(plan.redeliveries)
        )

    def _delivery(self, kind: str, pr: int, head: str) -> Delivery:
        self._ids += 1
        action = "opened" if kind == "opened" else "synchronize"
        fixture = f"pull_request.{action}.payload.json"
        payload = variant(
            fixture,
            **{
                "action": action,
                "number": pr,
                "pull_request.number": pr,
                "pull_request.head.sha": head,
                "pull_request.draft": False,
                "repository.full_name": REPO,
                "installation.id": 1,
            },
        )
        if action == "synchronize":
            payload["after"] = head
        body = json.dumps(payload).encode()
        return Delivery(f"burst-{self._ids:05d}-{os.getpid()}", kind, pr, head, body)

    def _push(self, pr: int, round_: int) -> None:
        started = time.time()
        files = {"people.py": PLANTED + f"\n\ndef step_{round_}():\n    return {round_}\n"}
        sha = self.rig.gh.push(REPO, self.rig.branches[pr], files, f"Step {round_}")
        self.pushes.append(Push(pr, sha, started, time.time()))
        self.heads[pr].append(sha)

    def _round(self, round_: int) -> list[Delivery]:
        """The deliveries of one round (its pushes are done), shuffled."""
        batch = []
        for pr in self.pulls:
            head = self.heads[pr][-1]
            batch.append(self._delivery("opened" if round_ == 0 else "synchronize", pr, head))
            if (round_, pr) in self.repeat_at:
                batch.append(self._delivery("repeat", pr, head))
        self.random.shuffle(batch)
        # Redeliveries: half race their original in this round, half are of earlier ones.
        out = list(batch)
        for _ in range(self.redeliver_at.get(round_, 0)):
            if self.sent and self.random.random() < 0.5:
                original = self.random.choice(self.sent)
            else:
                original = self.random.choice(batch)
            copy = Delivery(original.id, "redelivery", original.pr, original.head, original.body)
            out.insert(self.random.randrange(len(out) + 1), copy)
        self.sent += batch
        return out

    async def burst(self) -> list[Answer]:
        answers: list[Answer] = []
        queue: asyncio.Queue[Delivery | None] = asyncio.Queue()

        async def client() -> None:
            while (delivery := await queue.get()) is not None:
                answers.append(await self._send(delivery))

        clients = [asyncio.create_task(client()) for _ in range(self.plan.concurrency)]
        pool = asyncio.Semaphore(4)

        async def push(pr: int, round_: int) -> None:
            async with pool:
                await asyncio.to_thread(self._push, pr, round_)

        loop = asyncio.get_running_loop()
        began = loop.time()
        for round_ in range(self.plan.rounds):
            await asyncio.sleep(max(0.0, began + round_ * self.plan.round_gap - loop.time()))
            if round_:
                # The pushes of this round, while the senders still drain the last one.
                await asyncio.gather(*(push(pr, round_) for pr in self.pulls))
            for delivery in self._round(round_):
                queue.put_nowait(delivery)
        for _ in clients:
            queue.put_nowait(None)
        await asyncio.gather(*clients)
        return answers

    async def _send(self, delivery: Delivery) -> Answer:
        headers = headers_for("pull_request", delivery.body, delivery=delivery.id)
        lines = ["POST /webhook HTTP/1.1", f"Host: 127.0.0.1:{self.port}"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        lines += [f"Content-Length: {len(delivery.body)}", "Connection: close", "", ""]
        request = "\r\n".join(lines).encode("latin-1") + delivery.body
        started = time.perf_counter()
        try:
            async with asyncio.timeout(ANSWER_LIMIT * 3):
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
                try:
                    writer.write(request)
                    reply = await reader.read()
                finally:
                    writer.close()
        except (OSError, TimeoutError):
            return Answer(delivery, None, None, time.perf_counter() - started)
        latency = time.perf_counter() - started
        head, _, body = reply.partition(b"\r\n\r\n")
        try:
            status = int(head[9:12])
            answer = json.loads(body).get("status")
        except ValueError:
            return Answer(delivery, None, None, latency)
        return Answer(delivery, status, answer, latency)


# -- the K3 stub's process --------------------------------------------------------------

STUB_KEY = "sk-burst-stub-key-0123456789"


def _serve_stub() -> int:
    """A K3 stub that answers every request at once with the planted bug's finding."""
    from k3stub import K3Stub

    stub = K3Stub(
        brain=lambda body: submit_reply(PLANTED_BUG), check_history=False, api_key=STUB_KEY
    )
    with stub, contextlib.suppress(KeyboardInterrupt):
        print(f"K3STUB_READY {stub.base_url}", flush=True)
        threading.Event().wait()  # until terminated
    return 0


if __name__ == "__main__" and sys.argv[1:] == ["--k3stub"]:
    sys.exit(_serve_stub())
