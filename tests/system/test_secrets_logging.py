"""Secrets never reach a log line or a posted text, across the whole App.

The App is run as it is deployed, from its environment: the webhook server (on a real
socket) takes signed deliveries and queues jobs; a worker context runs them against the
fake GitHub and the K3 stub, fetching by git into its mirror cache. Every logger is at
DEBUG (PyGithub, urllib3, openai, httpx2, werkzeug, kombu and celery included) and
every record is captured, formatted as a handler would (tracebacks included).

Faults make the secrets likelier to show up: an installation token that dies mid-task
(PyGithub logs the minting exchange and the 401), a model error whose message echoes
the API key, a GitHub error whose message echoes the token, a delivery signed with the
wrong secret.

Searched for: every installation token the fake minted, any JWT (and the header part of
one minted here), each body line of the App's private key, the webhook secret and the
K3 API key. Searched in: every log line, every request body, header and query the fake
GitHub received (it records no Authorization), every request the K3 stub received
(which must have carried the key in Authorization only, or it would have refused it),
the webhook's answers, the queued jobs, and every file the App wrote.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from github import Auth

from bot.jobs import ReviewJob
from bot.logs import JsonFormatter
from bot.store import upgrade
from bot.usecases.review.run import (
    JobContext,
    TransientJobError,
    add_eyes_reaction,
    run_review_job,
)
from bot.web.app import create_app
from bot.web.settings import WebSettings
from tests.fakes.github import FakeGitHub
from tests.fakes.k3 import K3Stub, Reply
from tests.support.faults import strings
from tests.support.job_world import REPO, submit
from tests.support.people import grant_maintainers
from tests.support.planted import ORIGINAL, PLANTED, PLANTED_BUG
from tests.support.webhooks import comment, headers_for, http_post, serve, variant
from workers.celeryapp.ledger import job_scope

LOGGED_LIBRARIES = [
    "github",
    "urllib3",
    "openai",
    "httpx2",
    "httpcore2",
    "werkzeug",
    "kombu",
    "celery",
    "requests",
    "pygit2",
    "flask",
]
JWT = re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}")
REVIEWS = f"/repos/{REPO}/pulls/1/reviews"


class Capture(logging.Handler):
    def __init__(self, fmt: str = "text") -> None:
        super().__init__(logging.DEBUG)
        self.fmt = fmt
        # Both formats the App writes (GITNEURAL_LOG_FORMAT): plain lines, and JSON ones
        # with the job's context.
        text = logging.Formatter("%(name)s %(levelname)s %(message)s")
        self.setFormatter(JsonFormatter() if fmt == "json" else text)
        self.lines: list[str] = []
        self.loggers: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))
        self.loggers.add(record.name.split(".")[0])


@pytest.fixture(params=["text", "json"])
def debug_logs(request: pytest.FixtureRequest) -> Iterator[Capture]:
    for name in LOGGED_LIBRARIES:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    capture = Capture(request.param)
    manager = logging.root.manager
    loggers = [logging.root] + [
        logger for logger in manager.loggerDict.values() if isinstance(logger, logging.Logger)
    ]
    loggers += [logging.getLogger(name) for name in LOGGED_LIBRARIES]
    saved = [(logger, logger.level) for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        if logger is logging.root or not logger.propagate:
            logger.addHandler(capture)
    try:
        yield capture
    finally:
        for logger, level in saved:
            logger.setLevel(level)
            logger.removeHandler(capture)


class JsonQueue:
    """The queue boundary: what a broker would hold, as JSON."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def submit(self, job: ReviewJob) -> None:
        self.messages.append(json.dumps(job.to_dict()))


def test_no_secret_in_any_log_line_or_posted_text(tmp_path: Path, debug_logs: Capture) -> None:
    k3_key = "sk-k3live-" + secrets.token_hex(20)
    webhook_secret = "whsec-" + secrets.token_hex(16)
    data_dir = tmp_path / "data"
    with FakeGitHub(tmp_path / "gh") as gh, K3Stub(api_key=k3_key) as stub:
        gh.create_repo(
            REPO,
            installation_id=1,
            files={
                "people.py": ORIGINAL,
                ".gitneural.toml": '[review]\neffort = "low"\n',
            },
        )
        gh.push(REPO, "feature", {"people.py": PLANTED}, "Tighten is_adult")
        gh.create_pull(REPO, head="feature", title="Tighten is_adult", body="Please review")
        grant_maintainers(gh, REPO)  # the /review comments are alice's
        env = {
            **gh.env(),
            "GITHUB_WEBHOOK_SECRET": webhook_secret,
            "KIMI_API_KEY": k3_key,
            "KIMI_BASE_URL": stub.base_url,
            "GITNEURAL_DATA_DIR": str(data_dir),
            "GITNEURAL_BOT_LOGIN": gh.bot_login,
        }
        ctx = JobContext.from_env(env)
        assert ctx.store is not None
        upgrade(ctx.store)  # usage is recorded there too, and the file searched
        ctx.github_pacing = False
        ctx.llm = dataclasses.replace(ctx.llm, backoff_base=0.01, max_retries=2)
        queue = JsonQueue()
        app = create_app(WebSettings.from_env(env), queue)

        # -- the webhook: three signed deliveries and one signed with the wrong secret --
        head = gh.head_sha(REPO, 1)
        opened = variant(
            "pull_request.opened.payload.json",
            **{
                "repository.full_name": REPO,
                "number": 1,
                "pull_request.number": 1,
                "pull_request.head.sha": head,
                "installation.id": 1,
            },
        )
        asks = [
            gh.add_issue_comment(REPO, 1, text, association="OWNER")
            for text in ("/review effort=low", "/review full")
        ]
        deliveries: list[tuple[str, Any, str]] = [("pull_request", opened, webhook_secret)]
        deliveries += [
            (
                "issue_comment",
                comment(
                    ask["body"],
                    "OWNER",
                    **{
                        "repository.full_name": REPO,
                        "issue.number": 1,
                        "comment.id": ask["id"],
                        "comment.user.login": ask["user"]["login"],
                        "installation.id": 1,
                    },
                ),
                webhook_secret,
            )
            for ask in asks
        ]
        deliveries.append(("pull_request", opened, "not-" + webhook_secret))
        answers = []
        with serve(app) as address:
            for event, payload, secret in deliveries:
                body = json.dumps(payload).encode()
                reply = http_post(
                    address, "/webhook", body, headers_for(event, body, secret=secret)
                )
                answers.append(reply)
        assert [a.status for a in answers] == [202, 202, 202, 401]
        jobs = [ReviewJob.from_dict(json.loads(m)) for m in queue.messages]

        # -- the worker, with faults ------------------------------------------------------
        # Job 1: the model fails once echoing the key; the token dies before the fetch.
        stub.push(
            Reply.http_error(500, "server_error", f"upstream refused Bearer {k3_key}"),
            submit(PLANTED_BUG),
        )
        gh.when("GET", REVIEWS, "expire_tokens", 1)
        with job_scope(jobs[0].to_dict(), "job-1"):
            first = run_review_job(jobs[0], ctx)
        # Job 2: GitHub refuses the inline comments with a message echoing the token.
        token = ctx.tokens.get(1)
        gh.fail(
            "POST",
            REVIEWS,
            status=422,
            body={
                "message": f"Unprocessable Entity for token {token}",
                "errors": [f"x-access-token:{token} is not allowed here"],
            },
        )
        stub.push(submit(dict(PLANTED_BUG, title="Off-by-one again")))
        add_eyes_reaction(jobs[1], ctx)
        with job_scope(jobs[1].to_dict(), "job-2"):
            second = run_review_job(jobs[1], ctx)
        # Job 3: the model refuses the request, quoting the key in its message.
        stub.push(
            Reply.http_error(400, "invalid_request_error", f"Authorization: Bearer {k3_key} bad")
        )
        add_eyes_reaction(jobs[2], ctx)
        with job_scope(jobs[2].to_dict(), "job-3"):
            third = run_review_job(jobs[2], ctx)
        results: list[Any] = [first, second, third]
        assert not any(isinstance(r, TransientJobError) for r in results)
        assert [r.status for r in results] == ["posted", "posted", "failed"]
        assert "422" in second.detail

        # -- the secrets -------------------------------------------------------------------
        minted = list(gh.store.tokens)
        assert len(minted) >= 2  # the dead token and its successor
        jwt_header = Auth.AppAuth(gh.app_id, gh.private_key_pem).token.split(".")[0]
        pem_lines = [
            line for line in gh.private_key_pem.splitlines() if line and "-----" not in line
        ]
        forbidden = {
            "webhook secret": webhook_secret,
            "K3 API key": k3_key,
            "JWT header": jwt_header,
            "PEM header": "PRIVATE KEY-----",
        }
        forbidden |= {f"token {i}": t for i, t in enumerate(minted)}
        forbidden |= {f"private key line {i}": line for i, line in enumerate(pem_lines)}

        # -- where they must not be ----------------------------------------------------------
        places: dict[str, list[str]] = {"log": debug_logs.lines}
        places["sent to GitHub"] = [
            text
            for r in gh.requests()
            for text in [*strings(r.json), *r.headers.values(), *r.query.values(), r.path]
        ]
        places["sent to K3"] = [
            text for r in stub.requests for text in [r.raw, *r.headers.values(), r.path]
        ]
        places["webhook answers"] = [json.dumps(a.json) for a in answers]
        places["queue"] = queue.messages
        places["files"] = [
            f.read_bytes().decode("latin-1") for f in data_dir.rglob("*") if f.is_file()
        ]
        assert places["sent to K3"] and places["files"]

        for where, texts in places.items():
            for text in texts:
                for what, value in forbidden.items():
                    assert value not in text, f"{what} found in {where}: {text[:300]!r}"
                assert not JWT.search(text), f"a JWT found in {where}: {text[:300]!r}"

        # The faults did happen, and the libraries did log at DEBUG.
        assert [r.status for r in gh.requests("POST", REVIEWS)] == [200, 422, 200]
        assert any(r.status == 401 for r in gh.requests(kind="git"))
        assert {"github", "urllib3", "gitneural", "werkzeug"} <= debug_logs.loggers
        assert debug_logs.loggers & {"openai", "httpx2", "httpcore2"}
        assert any("access_tokens" in line for line in debug_logs.lines)
        [failed] = [c for c in gh.check_runs(REPO) if c["conclusion"] == "failure"]
        assert "***" in failed["output"]["summary"]  # the key was there, and was removed
        assert all(r.headers.get("authorization") is None for r in stub.requests)
        if debug_logs.fmt == "json":
            records = [json.loads(line) for line in debug_logs.lines]
            assert {r.get("delivery") for r in records} >= {j.delivery_id for j in jobs}
            assert any(r.get("job") == "job-1" and r.get("repository") == REPO for r in records)
