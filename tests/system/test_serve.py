"""``gitneural serve`` end to end: real gunicorn and embedded Celery workers in their own
processes, the fake GitHub and the K3 stub reachable by URL, GitHub's example deliveries
pointed at the fake's pull requests and signed with the test secret."""

from __future__ import annotations

import re
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.cli.server.commands import _EXIT_MARGIN
from tests.support.services import (
    GITNEURAL,
    REDIS_URL,
    REPO,
    SUGGESTION,
    AppWorld,
    GitNeuralProcess,
    app_world,
    children_of,
    drop_redis_keys,
    free_port,
    pid_alive,
    require_redis,
    start_serve,
    unique_prefix,
    wait_for,
    worker_ready,
)
from tests.support.webhooks import Reply, encode, headers_for, http_post
from workers.settings import WorkerSettings


@dataclass
class Served:
    world: AppWorld
    proc: GitNeuralProcess
    address: str

    def deliver(
        self, event: str, payload: dict[str, Any], delivery: str | None = None, **kw: Any
    ) -> Reply:
        body = encode(payload)
        headers = headers_for(event, body, delivery=delivery or str(uuid.uuid4()), **kw)
        return http_post(self.address, "/webhook", body, headers)

    def outcomes(self, delivery: str) -> list[str]:
        return re.findall(
            rf"review job delivery={re.escape(delivery)} .* outcome=(\S+)", self.proc.log()
        )

    def wait_outcome(self, delivery: str) -> str:
        return wait_for(lambda: self.outcomes(delivery), f"the job of {delivery}", 60)[-1]


def serve_world(
    world: AppWorld, root: Path, *args: str, **env: str
) -> tuple[GitNeuralProcess, str]:
    """``gitneural serve`` with ``world``'s environment, its data and log under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return start_serve(world.env(root / "data", **env), root / "serve.log", *args)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("serve")
    with app_world(root) as world:
        proc, address = serve_world(world, root)
        proc.wait_log("ready.", count=2, timeout=60)  # the reviews and the fast worker
        yield Served(world, proc, address)
        assert proc.stop() == 0


def test_opened_gets_one_review_and_its_redelivery_none(served: Served) -> None:
    w = served.world
    number = w.new_pull()
    payload = w.opened(number)
    first = served.deliver("pull_request", payload, delivery="opened-1")
    assert (first.status, first.json["status"]) == (202, "queued")
    assert served.wait_outcome("opened-1") == "posted"
    again = served.deliver("pull_request", payload, delivery="opened-1")
    assert (again.status, again.json["status"]) == (200, "duplicate")
    # A later delivery for the same PR runs after anything queued before it.
    later = served.deliver("pull_request", w.opened(number, "reopened"), delivery="reopened-1")
    assert later.status == 202
    assert served.wait_outcome("reopened-1") == "nothing-new"  # this head was reviewed
    assert served.outcomes("opened-1") == ["posted"]
    [review] = w.reviews(number)
    assert (review["event"], review["commit_id"]) == (
        "COMMENT",
        payload["pull_request"]["head"]["sha"],
    )
    [comment] = review["comments"]
    assert (comment["path"], comment["line"]) == ("people.py", 2)
    assert SUGGESTION in comment["body"]


def test_review_by_a_collaborator_gets_eyes_then_a_review(served: Served) -> None:
    w = served.world
    number = w.new_pull()
    payload = w.comment(number, "/review", "COLLABORATOR")
    reply = served.deliver("issue_comment", payload, delivery="command-1")
    assert (reply.status, reply.json["trigger"]) == (202, "command")
    assert served.wait_outcome("command-1") == "posted"
    comment_id = payload["comment"]["id"]
    assert [r["content"] for r in w.gh.reactions(REPO, comment_id)] == ["eyes"]
    posts = [r.path for r in w.gh.requests(method="POST", kind="api")]
    eyes = f"/repos/{REPO}/issues/comments/{comment_id}/reactions"
    assert posts.index(eyes) < posts.index(f"/repos/{REPO}/pulls/{number}/reviews")
    assert len(w.reviews(number)) == 1


def test_review_by_someone_without_write_access_does_nothing(served: Served) -> None:
    w = served.world
    number = w.new_pull()
    payload = w.comment(number, "/review", "NONE")
    reply = served.deliver("issue_comment", payload, delivery="command-none")
    assert (reply.status, reply.json["status"]) == (200, "ignored")
    assert "NONE is not allowed" in reply.json["reason"]
    assert w.gh.reactions(REPO, payload["comment"]["id"]) == []
    assert w.reviews(number) == []
    assert "delivery=command-none" not in served.proc.log().split("decision=ignored")[-1]
    assert served.outcomes("command-none") == []


@pytest.mark.parametrize("signature", ["sha256=" + "0" * 64, None, "sign-with-other-secret"])
def test_a_bad_signature_is_401_and_queues_nothing(served: Served, signature: str | None) -> None:
    w = served.world
    number = w.new_pull()
    delivery = f"unsigned-{uuid.uuid4()}"
    kw: dict[str, Any] = {"signature": signature}
    if signature == "sign-with-other-secret":
        kw = {"signature": "sign", "secret": "not-the-secret"}
    reply = served.deliver("pull_request", w.opened(number), delivery=delivery, **kw)
    assert reply.status == 401
    # Then a good one: had the bad one been queued, it would have run first.
    good = served.deliver("pull_request", w.opened(number), delivery=delivery + "-good")
    assert good.status == 202
    assert served.wait_outcome(delivery + "-good") == "posted"
    assert served.outcomes(delivery) == []
    assert len(w.reviews(number)) == 1


def test_nothing_ever_wrote_to_the_repository_or_approved(served: Served) -> None:
    # Its own review and a /review's, so that it holds on a worker that ran no other test
    # of this module (each test is handed out on its own); what the others did is checked
    # too where they ran first.
    w = served.world
    opened, command = w.new_pull(), w.new_pull()
    served.deliver("pull_request", w.opened(opened), delivery="writes-opened")
    review_command = w.comment(command, "/review", "COLLABORATOR")
    served.deliver("issue_comment", review_command, delivery="writes-cmd")
    assert [served.wait_outcome(d) for d in ("writes-opened", "writes-cmd")] == ["posted"] * 2
    gh = w.gh
    assert gh.forbidden_requests() == []
    writes = [r for r in gh.requests(kind="api") if r.method in ("POST", "PUT", "PATCH", "DELETE")]
    assert len(w.reviews(opened)) == len(w.reviews(command)) == 1
    allowed = re.compile(
        r"/app/installations/\d+/access_tokens|/repos/octo/app/(check-runs(/\d+)?"
        r"|pulls/\d+/reviews|issues/comments/\d+/reactions|issues/\d+/comments)"
    )
    assert [r.path for r in writes if not allowed.fullmatch(r.path)] == []
    events = {r.json.get("event") for r in writes if r.path.endswith("/reviews") and r.json}
    assert events == {"COMMENT"}


# ---- starting and stopping -------------------------------------------------------------


def test_with_nothing_set_serve_lists_every_missing_setting_in_one_run(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "GITNEURAL_DATA_DIR": str(tmp_path)}
    result = subprocess.run(
        [*GITNEURAL, "serve", "--port", str(free_port())],
        env=env,
        cwd=tmp_path,  # no gitneural.env here
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    head, *problems = result.stderr.strip().splitlines()
    assert head.startswith("gitneural: error: serve cannot start: 4 settings to fix")
    missing = [line.split()[0] for line in problems]
    # The model key too: serve no longer starts without one and says nothing.
    assert missing == [
        "GITHUB_APP_ID",
        "GITHUB_PRIVATE_KEY",
        "GITHUB_WEBHOOK_SECRET",
        "KIMI_API_KEY",
    ]
    assert all("is not set: " in line for line in problems)


def test_bad_settings_are_listed_with_the_missing_ones(tmp_path: Path) -> None:
    (tmp_path / "gitneural.env").write_text(
        "# from gitneural setup\nGITHUB_WEBHOOK_SECRET='s3cret'\nGITNEURAL_REVIEW_DRAFTS=maybe\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
        "GITHUB_APP_ID": "twelve",
        "GITNEURAL_WORKER_CONCURRENCY": "0",
        "GITNEURAL_BROKER_URL": "ftp://broker",
    }
    result = subprocess.run(
        [*GITNEURAL, "serve", "--worker"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    problems = result.stderr.strip().splitlines()[1:]
    named = {line.split()[0] for line in problems}
    expected = {
        "GITHUB_PRIVATE_KEY",
        "KIMI_API_KEY",
        "GITNEURAL_REVIEW_DRAFTS",
        "GITHUB_APP_ID",
        "GITNEURAL_BROKER_URL",
        "GITNEURAL_WORKER_CONCURRENCY",
    }
    assert named == expected, problems
    assert str(tmp_path / "gitneural.env") in result.stderr.splitlines()[0]
    assert "s3cret" not in result.stderr


def test_sigterm_stops_every_process_and_a_dead_child_is_started_again(tmp_path: Path) -> None:
    with app_world(tmp_path) as world:
        proc, _ = serve_world(world, tmp_path / "a")
        proc.wait_log("ready.", count=2, timeout=60)
        children = children_of(proc.pid)
        family = children + [g for c in children for g in children_of(c)]
        assert len(children) == 3 and len(family) >= 4  # web (+ its gunicorn worker), 2 workers
        started = time.monotonic()
        assert proc.stop(signal.SIGTERM) == 0
        # Every child stopped on its own: past the workers' grace plus this margin the
        # supervisor kills what is left (load cannot make a clean stop that late).
        grace = WorkerSettings.from_env(proc.env).shutdown_grace
        assert time.monotonic() - started < grace + _EXIT_MARGIN
        wait_for(lambda: not any(pid_alive(p) for p in family), "every child to exit", 10)

        proc, address = serve_world(world, tmp_path / "b")
        proc.wait_log("ready.", count=2, timeout=60)
        web, *workers = children_of(proc.pid)
        subprocess.run(["kill", "-KILL", str(web), *map(str, workers)], check=True)
        # Like a process manager, serve starts each of them again and keeps serving.
        proc.wait_log("ready.", count=4, timeout=90)
        assert proc.alive()
        assert "the web process exited with -9; starting it again" in proc.log()
        again = children_of(proc.pid)
        assert len(again) == 3 and not set(again) & {web, *workers}
        served = Served(world, proc, address)
        number = world.new_pull()
        wait_for(
            lambda: served.deliver("pull_request", world.opened(number)).status == 202,
            "the restarted web server to queue a delivery",
            60,
            0.5,
        )
        wait_for(lambda: world.reviews(number), "the review by the restarted workers", 60)
        assert proc.stop(signal.SIGTERM) == 0


@pytest.mark.redis
def test_shared_broker_serves_the_web_only_and_separate_workers_review(tmp_path: Path) -> None:
    client = require_redis()
    prefix = unique_prefix()
    env = {"GITNEURAL_BROKER_URL": REDIS_URL, "GITNEURAL_QUEUE_PREFIX": prefix}
    try:
        with app_world(tmp_path) as world:
            proc, address = serve_world(world, tmp_path, **env)
            served = Served(world, proc, address)
            assert children_of(proc.pid), "gunicorn's workers"
            assert "celery" not in proc.log().lower()  # no embedded worker
            number = world.new_pull()
            # The delivery log on the broker's Redis is shared: a delivery id of its own.
            delivery = f"{prefix}-delivery"
            reply = served.deliver("pull_request", world.opened(number), delivery=delivery)
            assert reply.status == 202
            worker_env = world.env(tmp_path / "data", **env)
            with GitNeuralProcess(["worker"], worker_env, tmp_path / "worker.log") as worker:
                worker_ready(worker)
                wait_for(lambda: world.reviews(number), "the review", 60)
            assert proc.stop() == 0
            assert len(world.reviews(number)) == 1
    finally:
        drop_redis_keys(client, prefix)
        drop_redis_keys(client, f"gitneural:delivery:{prefix}")
