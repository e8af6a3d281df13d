"""The evidence rule end to end: a signed webhook delivery to ``gitneural serve`` (real
gunicorn, Celery workers on the embedded broker or on the real Redis), the K3 stub and the
fake GitHub. A finding whose quote is invented is not posted, and the review and its check
run count it; a real quote with other indentation is posted."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.planted import INVENTED_EVIDENCE, PLANTED_BUG
from tests.support.services import (
    REDIS_URL,
    REPO,
    SUGGESTION,
    AppWorld,
    GitNeuralProcess,
    app_world,
    drop_redis_keys,
    require_redis,
    start_serve,
    unique_prefix,
    wait_for,
    worker_ready,
)
from tests.support.webhooks import encode, headers_for, http_post

COUNT = "1 finding dropped: quoted code not found"
REQUOTED = dict(PLANTED_BUG, evidence="  return age>18  ")
INVENTED = dict(
    PLANTED_BUG,
    title="is_adult evaluates its argument",
    evidence=INVENTED_EVIDENCE,
    suggestion=None,
)


@dataclass
class App:
    world: AppWorld
    address: str

    def open_pull(self, findings: list[dict[str, Any]]) -> int:
        """A new PR whose review K3 answers with ``findings``; its opening delivered."""
        number = self.world.new_pull()
        self.world.answers[self.world.title(number)] = findings
        body = encode(self.world.opened(number))
        reply = http_post(
            self.address,
            "/webhook",
            body,
            headers_for("pull_request", body, delivery=str(uuid.uuid4())),
        )
        assert reply.status == 202, reply.json
        return number

    def review_of(self, number: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """The PR's one review, and the completed check run of its head."""
        [review] = wait_for(lambda: self.world.reviews(number), "the review", 90)
        head = self.world.gh.head_sha(REPO, number)

        def completed() -> list[dict[str, Any]]:
            runs = self.world.gh.check_runs(REPO, head)
            return [r for r in runs if r["status"] == "completed"]

        [check] = wait_for(completed, "the completed check run", 30)
        return review, check


@contextlib.contextmanager
def running(kind: str, root: Path) -> Iterator[App]:
    extra: dict[str, str] = {}
    client = None
    if kind == "redis":
        client = require_redis()
        extra = {"GITNEURAL_BROKER_URL": REDIS_URL, "GITNEURAL_QUEUE_PREFIX": unique_prefix()}
    try:
        with app_world(root) as world:
            env = world.env(root / "data", **extra)
            proc, address = start_serve(env, root / "serve.log")
            with contextlib.ExitStack() as stack:
                if kind == "redis":  # a shared broker: serve is the web only
                    worker = stack.enter_context(
                        GitNeuralProcess(["worker"], env, root / "worker.log")
                    )
                    worker_ready(worker)
                else:
                    proc.wait_log("ready.", count=2, timeout=60)
                yield App(world, address)
            assert proc.stop() == 0
    finally:
        if client is not None:
            drop_redis_keys(client, extra["GITNEURAL_QUEUE_PREFIX"])


@pytest.fixture(scope="module", params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    with running(request.param, tmp_path_factory.mktemp(request.param)) as served:
        yield served


def test_an_invented_quote_is_not_posted_and_is_counted(app: App) -> None:
    number = app.open_pull([INVENTED, REQUOTED])
    review, check = app.review_of(number)
    [comment] = review["comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("people.py", 2, "RIGHT")
    assert SUGGESTION in comment["body"]
    assert "evaluates its argument" not in review["body"] + comment["body"]
    assert COUNT in review["body"]
    assert COUNT in check["output"]["summary"]
    assert "quoted code not found in new-file lines 1-5" in check["output"]["text"]
    assert len(check["annotations"]) == 1


def test_only_invented_quotes_post_a_review_without_findings(app: App) -> None:
    number = app.open_pull([INVENTED])
    review, check = app.review_of(number)
    assert review["comments"] == []
    assert f"**no findings** · {COUNT}" in review["body"]
    assert check["output"]["title"] == "No findings" and COUNT in check["output"]["summary"]
