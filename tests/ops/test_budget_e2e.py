"""Budgets through the whole App: a review over budget is not sent to the model, one
check run says why and when the budget resets, a second push says nothing new, the
spend survives a restart of ``gitneural serve`` and ``gitneural usage`` shows it."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import uuid
from pathlib import Path

from bot.settings.budgets import month_of, month_start, next_month
from bot.store import database_url, open_store, upgrade
from bot.usecases.review.run import run_review_job
from bot.usecases.spend import BUDGET_TITLE
from tests.fakes.k3 import Reply
from tests.support.job_world import job_world, submit
from tests.support.ops import deliver, served, spent_tokens
from tests.support.planted import PLANTED_BUG
from tests.support.scrape import scrape
from tests.support.services import (
    GITNEURAL,
    REPO,
    ROOT,
    app_world,
    outcomes,
    worker_ready,
)


def opened(address: str, payload: object, delivery: str) -> None:
    assert deliver(address, "pull_request", payload, delivery) == 202


def usage(env: dict[str, str], fmt: str) -> str:
    done = subprocess.run(
        [*GITNEURAL, "usage", "--format", fmt],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_budget_smaller_than_one_review_sends_nothing(tmp_path: Path) -> None:
    """In process, from an empty store: the review's own estimate is over the cap."""
    with job_world(tmp_path) as w:
        budgets = tmp_path / "budgets.toml"
        budgets.write_text('[repository."octo/app"]\nmonthly_tokens = 100\n')
        env = {"GITNEURAL_DATA_DIR": str(tmp_path / "data"), "GITNEURAL_BUDGETS_FILE": str(budgets)}
        from bot.settings.budgets import load_budgets

        w.ctx.budgets = load_budgets(env)
        w.ctx.store = open_store(database_url(env))
        upgrade(w.ctx.store)
        w.stub.push(submit(PLANTED_BUG))
        outcome = run_review_job(w.job(), w.ctx)
        assert outcome.status == "budget"
        assert w.stub.chat_requests == [] and w.reviews() == []
        [check] = w.check_runs()
        assert (check["conclusion"], check["output"]["title"]) == ("neutral", BUDGET_TITLE)
        summary = check["output"]["summary"]
        assert "\n" not in summary and "repository octo/app (100 tokens)" in summary
        assert "this one needs about" in summary
        # The same head again (a redelivery): nothing new is said.
        again = run_review_job(w.job(), w.ctx)
        assert again.status == "budget" and "told already" in again.detail
        assert len(w.check_runs()) == 1 and w.stub.chat_requests == []


def test_over_budget_through_serve_across_a_restart(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with app_world(tmp_path) as w:
        env = w.env(data)
        # 1. No budget: a review is posted and what it cost is recorded.
        with served(env, tmp_path / "first.log") as (proc, address):
            worker_ready(proc)
            first = w.new_pull()
            delivery = str(uuid.uuid4())
            opened(address, w.opened(first), delivery)
            [(status, _, _)] = outcomes(proc, delivery)
            assert status == "posted"
        requests = w.stub.chat_requests
        spent = spent_tokens(w.stub)
        assert spent > 100

        # 2. Restarted with a budget smaller than one review.
        budgets = tmp_path / "budgets.toml"
        budgets.write_text('[repository."octo/app"]\nmonthly_tokens = 100\n')
        env["GITNEURAL_BUDGETS_FILE"] = str(budgets)
        with served(env, tmp_path / "second.log") as (proc, address):
            worker_ready(proc)
            number = w.new_pull()
            head = w.gh.head_sha(REPO, number)
            delivery = str(uuid.uuid4())
            opened(address, w.opened(number), delivery)
            [(status, _, detail)] = outcomes(proc, delivery)
            assert status == "budget" and "not sent to the model" in detail
            pushed = w.push(number, {"calc.py": "def half(n):\n    return n / 2\n"})
            again = str(uuid.uuid4())
            opened(address, w.opened(number, action="synchronize"), again)
            [(status, _, detail)] = outcomes(proc, again)
            assert status == "budget" and "told already" in detail
            m = scrape(address)
        assert len(w.stub.chat_requests) == len(requests)  # the model was not asked
        assert w.reviews(number) == []
        [check] = w.gh.check_runs(REPO, head)
        resets = month_start(next_month(month_of())).strftime("%Y-%m-%d %H:%M UTC")
        assert check["output"]["title"] == BUDGET_TITLE
        assert check["output"]["summary"] == (
            "Not reviewed: the monthly token budget of repository octo/app (100 tokens) is "
            f"spent ({spent:,} used this month, this one needs about "
            f"{check['output']['summary'].split('needs about ')[1].split(')')[0]}); "
            f"it resets on {resets}."
        )
        assert w.gh.check_runs(REPO, pushed) == []  # the second push: nothing new
        bot_comments = [
            c for c in w.gh.issue_comments(REPO, number) if c["user"]["login"] == w.gh.bot_login
        ]
        assert bot_comments == []
        assert m.value("gitneural_jobs_total", kind="review", outcome="skipped") == 2
        assert m.value("gitneural_budget_refusals_total", kind="review") == 2

        # 3. gitneural usage shows the spend kept across the restart, in every format.
        text = usage(env, "text")
        line = next(line for line in text.splitlines() if REPO in line)
        assert f"{spent:,}" in line and "100 (repository octo/app)" in line
        assert f"{100 * spent / 100:.1f}%" in line
        [installation] = json.loads(usage(env, "json"))["installations"]
        [repo] = installation["repositories"]
        assert (repo["repository"], repo["tokens"], repo["requests"]) == (
            REPO,
            spent,
            len(requests),
        )
        assert repo["share"] == spent / 100
        rows = {r["repository"]: r for r in csv.DictReader(io.StringIO(usage(env, "csv")))}
        assert rows[REPO]["tokens"] == str(spent) and rows[REPO]["budget_tokens"] == "100"


def test_a_model_failure_still_records_what_was_spent(tmp_path: Path) -> None:
    """Tokens are recorded per request: a review whose repair turn fails is paid for."""
    with job_world(tmp_path) as w:
        env = {"GITNEURAL_DATA_DIR": str(tmp_path / "data")}
        w.ctx.store = open_store(database_url(env))
        upgrade(w.ctx.store)
        w.stub.push(Reply(content="no tool call"), Reply.http_error(400, "invalid_request_error"))
        outcome = run_review_job(w.job(), w.ctx)
        assert outcome.status == "failed"
        from bot.store.usage import month_usage

        [row] = month_usage(w.ctx.store, month_of())
        [answered] = [r for r in w.stub.chat_requests if r.usage]
        assert row.prompt_tokens == answered.usage["prompt_tokens"]  # type: ignore[index]
        assert row.requests == 1
