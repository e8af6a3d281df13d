"""Real services for the App's tests: Redis (or a skip), GitNeural processes with their
logs, a fake GitHub repository with a planted bug, and webhook deliveries derived from
GitHub's own example payloads.

    with app_world(tmp_path) as w:          # FakeGitHub + K3Stub in threads, by URL
        number = w.new_pull()
        env = w.env(tmp_path / "data")
        with GitNeuralProcess(["worker"], env, tmp_path / "worker.log") as worker:
            ...
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis

from bot.jobs import ReviewJob
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.conversation import conversation_reply, is_conversation
from tests.support.paths import ROOT
from tests.support.people import grant_maintainers
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.walkthrough import walkthrough_for
from tests.support.webhooks import SECRET, http_get, variant

REDIS_URL = "redis://127.0.0.1:6379/0"
GITNEURAL = [sys.executable, "-m", "bot.cli.main"]

REPO = "octo/app"
CONFIG = '[review]\neffort = "low"\n'
SUGGESTION = "```suggestion\n    return age >= 18\n```"

T = TypeVar("T")


def require_redis() -> redis.Redis:
    """The Redis at 127.0.0.1:6379; skips (fails under ``CI=true``) when it is down."""
    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1)
    try:
        client.ping()
    except redis.RedisError:
        message = (
            "Redis is not reachable at 127.0.0.1:6379; start it with "
            "`redis-server --daemonize yes` (or `docker run -d -p 6379:6379 redis:7`)"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return client


def drop_redis_keys(client: redis.Redis, prefix: str) -> None:
    keys = list(client.scan_iter(match=prefix + "*"))
    if keys:
        client.delete(*keys)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(
    check: Callable[[], T | None], what: str, timeout: float = 30.0, interval: float = 0.05
) -> T:
    """Poll ``check`` until it returns something truthy; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class GitNeuralProcess:
    """``gitneural ARGS`` in its own process, output in ``log``; stopped on exit.
    ``program``: another entry point that ends in GitNeural's (one that registers a
    command first, say)."""

    def __init__(
        self,
        args: list[str],
        env: dict[str, str],
        log: Path,
        program: list[str] | None = None,
        prefix: Sequence[str] = (),
    ) -> None:
        #: ``prefix``: what runs it, e.g. ``ip netns exec`` on a host of its own.
        self.args, self.env, self.log_path, self.prefix = args, env, log, list(prefix)
        self.program = program or GITNEURAL
        self.proc: subprocess.Popen[bytes] | None = None
        self._terminated = False

    def start(self) -> GitNeuralProcess:
        self._log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [*self.prefix, *self.program, "-v", *self.args],
            env=self.env,
            cwd=ROOT,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def wait_log(self, text: str, timeout: float = 30.0, count: int = 1) -> str:
        def found() -> bool:
            if not self.alive() and self.log().count(text) < count:
                raise AssertionError(f"process exited; log:\n{self.log()[-3000:]}")
            return self.log().count(text) >= count

        wait_for(found, f"{text!r} in {self.log_path.name}", timeout)
        return self.log()

    def terminate(self) -> None:
        """SIGTERM without waiting (see :func:`stop_together`); ``stop`` then only waits."""
        if self.proc is not None and self.proc.poll() is None and not self._terminated:
            self.proc.send_signal(signal.SIGTERM)
            self._terminated = True

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        assert self.proc is not None
        if self.proc.poll() is None and not (sig == signal.SIGTERM and self._terminated):
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._log.close()
        return code

    def __enter__(self) -> GitNeuralProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.stop(timeout=30)


def stop_together(procs: Sequence[GitNeuralProcess]) -> None:
    """SIGTERM to every process before any is waited for: a Celery worker notices only
    when its loop next wakes (up to 2 s) and then closes its pool, seconds each that
    processes stopped one after the other add up. Register it on the ExitStack after the
    processes, so it runs before their own exits, which then only wait."""
    for proc in procs:
        proc.terminate()


def worker_ready(proc: GitNeuralProcess) -> None:
    proc.wait_log("ready.", timeout=60)


def start_serve(
    env: dict[str, str], log: Path, *args: str, program: list[str] | None = None
) -> tuple[GitNeuralProcess, str]:
    """``gitneural serve`` (one web worker) on a free port, once ``/healthz`` answers; the
    process and its ``host:port``."""
    port = free_port()
    argv = ["serve", "--port", str(port), "--workers", "1", *args]
    proc = GitNeuralProcess(argv, env, log, program)
    proc.start()
    address = f"127.0.0.1:{port}"

    def healthy() -> bool:
        if not proc.alive():
            raise AssertionError(f"serve exited:\n{proc.log()[-3000:]}")
        try:
            return http_get(address, "/healthz").status == 200
        except OSError:
            return False

    wait_for(healthy, "GET /healthz", 60)
    return proc, address


def children_of(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if not path.exists():
        return []
    return [int(p) for p in path.read_text().split()]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie has exited; only its parent has not reaped it yet.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


def submit_reply(
    *findings: dict[str, Any],
    think_seconds: float = 0.0,
    walkthrough: dict[str, Any] | None = None,
) -> Reply:
    arguments: dict[str, Any] = {"summary": "Reviewed.", "findings": list(findings)}
    if walkthrough is not None:
        arguments["walkthrough"] = walkthrough
    return Reply(
        reasoning="Comparing old and new code.",
        tool_calls=[("submit_review", arguments)],
        think_seconds=think_seconds,
    )


@dataclass
class AppWorld:
    gh: FakeGitHub
    stub: K3Stub
    #: Seconds the model is silent before each answer (a review in flight, countable).
    think: float = 0.0
    #: Set: every answer still thinking comes at once (a model call held over a cut).
    wake: threading.Event = field(default_factory=threading.Event)
    #: Seconds each answer streams its reasoning (a review in flight, running Python).
    stream: float = 0.0
    #: Chat requests in flight at once, per PR title, and the most seen (all PRs: "*").
    active: dict[str, int] = field(default_factory=dict)
    most_active: dict[str, int] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=dict)
    #: The findings the model submits for the PR of a title (default: the planted bug).
    answers: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: Answer a prompt that asks for a walkthrough with one (``tests.support.walkthrough``).
    walkthroughs: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _branches: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def brain(self, body: dict[str, Any]) -> Reply:
        if is_conversation(body):
            with self._lock:
                self.calls["conversation"] = self.calls.get("conversation", 0) + 1
            return conversation_reply(body)
        text = str(body.get("messages"))
        title = next((t for t in self.active if t != "*" and t in text), "?")
        with self._lock:
            for key in (title, "*"):
                self.calls[key] = self.calls.get(key, 0) + 1
                self.active[key] = self.active.get(key, 0) + 1
                self.most_active[key] = max(self.most_active.get(key, 0), self.active[key])
        try:
            if self.think:
                self.wake.wait(self.think)
            findings = self.answers.get(title, [PLANTED_BUG])
            walkthrough = walkthrough_for(body) if self.walkthroughs else None
            return submit_reply(*findings, think_seconds=self.stream, walkthrough=walkthrough)
        finally:
            with self._lock:
                for key in (title, "*"):
                    self.active[key] -= 1

    def new_pull(self, files: dict[str, str | None] | None = None) -> int:
        """A new PR planting the bug, titled ``PR <n>`` (the brain tells PRs apart by it)."""
        branch = f"feature-{next(self._branches)}"
        self.gh.push(REPO, branch, files or {"people.py": PLANTED}, "Tighten is_adult")
        title = f"Pull {branch} ok"  # "feature-1 ok" is not in "feature-10 ok"
        number = self.gh.create_pull(REPO, head=branch, title=title, body="Please")
        with self._lock:
            self.active.setdefault(title, 0)
        return number

    def push(self, number: int, files: dict[str, str | None]) -> str:
        branch = self.gh.pull(REPO, number)["head"]["ref"]
        self.gh.push(REPO, branch, files, "More")
        return self.gh.head_sha(REPO, number)

    def title(self, number: int) -> str:
        return str(self.gh.pull(REPO, number)["title"])

    def reviews(self, number: int) -> list[dict[str, Any]]:
        return self.gh.reviews(REPO, number)

    def env(self, data_dir: Path, **extra: str) -> dict[str, str]:
        """The environment of GitNeural's processes: credentials, stub URLs, fast polling."""
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITNEURAL_", "GITHUB_", "KIMI_", "MOONSHOT_"))
        }
        return {
            **base,
            **self.gh.env(),
            "KIMI_API_KEY": self.stub.api_key,
            "KIMI_BASE_URL": self.stub.base_url,
            "GITHUB_WEBHOOK_SECRET": SECRET,
            "GITNEURAL_BOT_LOGIN": self.gh.bot_login,
            "GITNEURAL_DATA_DIR": str(data_dir),
            "GITNEURAL_BROKER_POLL_INTERVAL": "0.05",
            "GITNEURAL_LOCK_RETRY_DELAY": "0.3",
            "GITNEURAL_LOCK_LEASE": "3",
            "GITNEURAL_RETRY_BACKOFF": "0.2",
            "GITNEURAL_RETRY_BACKOFF_MAX": "1",
            "GITNEURAL_SHUTDOWN_GRACE": "2",
            **extra,
        }

    # -- deliveries -------------------------------------------------------------------

    def opened(self, number: int, action: str = "opened") -> dict[str, Any]:
        """GitHub's ``pull_request.opened`` example, pointed at the fake's PR."""
        pull = self.gh.pull(REPO, number)
        return variant(
            "pull_request.opened.payload.json",
            **{
                "action": action,
                "number": number,
                "pull_request.number": number,
                "pull_request.head.sha": pull["head"]["sha"],
                "pull_request.draft": False,
                "repository.full_name": REPO,
                "installation.id": 1,
            },
        )

    def comment(self, number: int, body: str, association: str) -> dict[str, Any]:
        """GitHub's PR comment example, saying ``body``, posted on the fake's PR."""
        posted = self.gh.add_issue_comment(REPO, number, body, association=association)
        return variant(
            "issue_comment.created.on-pull-request.payload.json",
            **{
                "issue.number": number,
                "issue.state": "open",
                "comment.id": posted["id"],
                "comment.body": body,
                "comment.author_association": association,
                "comment.user.login": posted["user"]["login"],
                "repository.full_name": REPO,
                "installation.id": 1,
            },
        )


@contextlib.contextmanager
def app_world(
    root: Path, *, check_history: bool = False, gh_host: str = "127.0.0.1"
) -> Iterator[AppWorld]:
    """The fake GitHub (repository ``octo/app``, installation 1; on ``gh_host``) and the K3
    stub (``check_history``: every assistant message must come back exactly as sent)."""
    with FakeGitHub(root / "gh", host=gh_host) as gh:
        gh.create_repo(
            REPO,
            installation_id=1,
            files={"people.py": ORIGINAL, "README.md": "# app\n", ".gitneural.toml": CONFIG},
        )
        grant_maintainers(gh, REPO)
        world: AppWorld
        with K3Stub(brain=lambda body: world.brain(body), check_history=check_history) as stub:
            world = AppWorld(gh, stub)
            yield world
        # Safety rule 1, after everything: nothing wrote to a repository or approved.
        assert gh.forbidden_requests() == []


OUTCOME = re.compile(r"review job delivery=(\S+) .* outcome=(\S+) review=(\S+) detail=(.*)")


def make_job(world: AppWorld, number: int, trigger: str = "opened", **kwargs: Any) -> ReviewJob:
    head = None if trigger == "command" else world.gh.head_sha(REPO, number)
    values: dict[str, Any] = {
        "installation_id": 1,
        "repo": REPO,
        "pr_number": number,
        "head_sha": head,
        "trigger": trigger,
        "delivery_id": f"{number}-{trigger}-{time.monotonic_ns()}",
    }
    return ReviewJob(**{**values, **kwargs})


def outcomes(proc: GitNeuralProcess, delivery: str, count: int = 1) -> list[tuple[str, str, str]]:
    """``[(status, review id, detail)]`` of ``delivery``'s jobs, once ``count`` ended."""

    def ended() -> list[tuple[str, str, str]]:
        found = [m.groups() for m in OUTCOME.finditer(proc.log())]
        mine = [(status, review, detail) for d, status, review, detail in found if d == delivery]
        if len(mine) < count and not proc.alive():
            raise AssertionError(f"the worker exited; log:\n{proc.log()[-3000:]}")
        return mine if len(mine) >= count else []

    return wait_for(ended, f"{count} outcome(s) of {delivery}", timeout=60)


def unique_prefix() -> str:
    return f"gntest-{uuid.uuid4().hex[:12]}"
