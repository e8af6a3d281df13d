"""Budgets and usage: the file's rules and errors, usage recorded in the store and kept
across restarts (SQLite and PostgreSQL), and ``gitneural usage`` in its three formats."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.errors import ConfigError
from bot.settings.budgets import Budgets, load_budgets, month_of, parse_budgets, refusal
from bot.store import open_store, upgrade
from bot.store.usage import claim_budget_notice, month_usage, record_usage, spent
from bot.usage import Usage
from tests.fakes.keys import new_rsa_pem
from tests.support.store import store_url  # noqa: F401 - the fixture

GITNEURAL = [sys.executable, "-m", "bot.cli.main"]
EXAMPLE = """
[default]
monthly_tokens = 50_000_000
[installation.4242001]
monthly_tokens = 2_000_000
[repository."acme/shop"]
monthly_tokens = 500_000
"""


def budgets_file(tmp_path: Path, text: str = EXAMPLE) -> Path:
    path = tmp_path / "budgets.toml"
    path.write_text(text)
    return path


def test_the_tightest_budget_that_applies_wins(tmp_path: Path) -> None:
    budgets = load_budgets({"GITNEURAL_BUDGETS_FILE": str(budgets_file(tmp_path))})
    limits = budgets.limits_for(4242001, "Acme/Shop")
    assert [(lim.scope, lim.monthly_tokens) for lim in limits] == [
        ("repository", 500_000),
        ("installation", 2_000_000),
    ]
    # Another installation: the default; a default below an installation's own cap wins.
    assert budgets.installation_limit(7) is not None
    assert budgets.installation_limit(7).monthly_tokens == 50_000_000  # type: ignore[union-attr]
    tight = parse_budgets(
        {"default": {"monthly_tokens": 10}, "installation": {"5": {"monthly_tokens": 99}}}
    )
    assert tight.installation_limit(5).monthly_tokens == 10  # type: ignore[union-attr]
    assert load_budgets({}) == Budgets() and Budgets().empty
    # The repository's cap is spent first although the installation has room.
    spend = {"repository": 499_000, "installation": 600_000}
    refused = refusal(limits, spend, 2_000, "2026-12")
    assert refused is not None and refused.limit.scope == "repository"
    assert refused.message == (
        "the monthly token budget of repository acme/shop (500,000 tokens) is spent "
        "(499,000 used this month, this one needs about 2,000); it resets on "
        "2027-01-01 00:00 UTC"
    )
    assert refusal(limits, spend, 1_000, "2026-12") is None


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("[defualt]\nmonthly_tokens = 1\n", "unknown table [defualt]"),
        ("[default]\nmonthly_token = 1\n", "default.monthly_token: unknown key"),
        ("[default]\nmonthly_tokens = -1\n", "default.monthly_tokens must be"),
        ("[installation.acme]\nmonthly_tokens = 1\n", "installation.acme: an installation id"),
        ('[repository."shop"]\nmonthly_tokens = 1\n', 'repository."shop": name it'),
        ('[repository."a/b"]\nmonthly_tokens = "lots"\n', 'repository."a/b".monthly_tokens'),
        ("[default\n", "is not valid TOML"),
    ],
)
def test_a_bad_budgets_file_is_one_line_naming_the_key(
    tmp_path: Path, text: str, names: str
) -> None:
    path = budgets_file(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_budgets({"GITNEURAL_BUDGETS_FILE": str(path)})
    message = str(caught.value)
    assert names in message and "\n" not in message and "GITNEURAL_BUDGETS_FILE" not in names


def test_serve_and_worker_refuse_a_bad_budgets_file_at_start(tmp_path: Path) -> None:
    path = budgets_file(tmp_path, "[installation.acme]\nmonthly_tokens = 1\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITNEURAL_DATA_DIR": str(tmp_path / "data"),
        "GITHUB_WEBHOOK_SECRET": "s",
        # Everything else set, so that the budgets file is the one problem reported.
        "GITHUB_APP_ID": "1",
        "GITHUB_PRIVATE_KEY": new_rsa_pem(),
        "KIMI_API_KEY": "sk-unused",
        "GITNEURAL_BUDGETS_FILE": str(path),
    }
    for command in (["serve", "--port", "1"], ["worker"]):
        done = subprocess.run(
            [*GITNEURAL, *command], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 2, done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("gitneural: error: ") and "installation.acme" in line


def test_usage_is_kept_across_restarts_and_summed_by_scope(
    store_url: str,  # noqa: F811
) -> None:
    store = open_store(store_url)
    upgrade(store)
    for pr, kind in [(1, "review"), (1, "review"), (2, "reply"), (3, "ask")]:
        record_usage(
            store,
            installation_id=9,
            repo="Octo/App",
            pr_number=pr,
            kind=kind,
            usage=Usage(100, 20, 40, 1),
        )
    record_usage(
        store,
        installation_id=9,
        repo="octo/lib",
        pr_number=4,
        kind="review",
        usage=Usage(1000, 200, 0, 1),
    )
    last_month = dt.datetime.now(dt.UTC) - dt.timedelta(days=40)
    record_usage(
        store,
        installation_id=9,
        repo="octo/app",
        pr_number=1,
        kind="review",
        usage=Usage(5, 5, 0, 1),
        when=last_month,
    )
    assert claim_budget_notice(
        store,
        installation_id=9,
        repo="octo/app",
        pr_number=1,
        month=month_of(),
        head_sha="a" * 40,
        kind="review",
    )
    store.close()

    again = open_store(store_url)  # a restart: a new engine on the same database
    month = month_of()
    rows = {
        (r.repo, r.prompt_tokens, r.completion_tokens, r.cached_tokens, r.requests)
        for r in month_usage(again, month)
    }
    assert rows == {("octo/app", 400, 80, 160, 4), ("octo/lib", 1000, 200, 0, 1)}
    assert spent(again, month, 9, "OCTO/APP") == {"installation": 1680, "repository": 480}
    # Told once a month per PR: a second push (another head) says nothing new.
    assert not claim_budget_notice(
        again,
        installation_id=9,
        repo="Octo/App",
        pr_number=1,
        month=month,
        head_sha="b" * 40,
        kind="review",
    )
    again.close()


def run_usage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*GITNEURAL, "usage", *args], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_gitneural_usage_in_three_formats(store_url: str, tmp_path: Path) -> None:  # noqa: F811
    store = open_store(store_url)
    upgrade(store)
    record_usage(
        store,
        installation_id=4242001,
        repo="acme/shop",
        pr_number=7,
        kind="review",
        usage=Usage(200_000, 50_000, 120_000, 3),
    )
    record_usage(
        store,
        installation_id=4242001,
        repo="acme/docs",
        pr_number=1,
        kind="reply",
        usage=Usage(10_000, 2_000, 0, 1),
    )
    store.close()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "GITNEURAL_DATABASE_URL": store_url,
        "GITNEURAL_BUDGETS_FILE": str(budgets_file(tmp_path)),
    }

    text = run_usage(env)
    assert f"Model usage in {month_of()}" in text
    shop = next(line for line in text.splitlines() if "acme/shop" in line)
    assert "250,000" in shop and "500,000 (repository acme/shop)" in shop and "50.0%" in shop
    total = next(line for line in text.splitlines() if "(all repositories)" in line)
    assert "262,000" in total and "2,000,000 (installation 4242001)" in total and "13.1%" in total

    document = json.loads(run_usage(env, "--format", "json"))
    [installation] = document["installations"]
    assert installation["installation_id"] == 4242001 and installation["tokens"] == 262_000
    assert installation["budget"] == {
        "scope": "installation",
        "key": "4242001",
        "monthly_tokens": 2_000_000,
    }
    repos = {r["repository"]: r for r in installation["repositories"]}
    assert repos["acme/shop"]["share"] == 0.5 and repos["acme/shop"]["cached_tokens"] == 120_000
    assert repos["acme/docs"]["budget"] is None and repos["acme/docs"]["share"] is None

    rows = list(csv.DictReader(io.StringIO(run_usage(env, "--format", "csv"))))
    by_repo = {row["repository"]: row for row in rows}
    assert set(by_repo) == {"*", "acme/docs", "acme/shop"}
    assert (
        by_repo["acme/shop"]["tokens"] == "250000" and by_repo["acme/shop"]["share"] == "0.500000"
    )
    assert by_repo["*"]["budget_tokens"] == "2000000"

    # Another month has nothing; a bad month is one line.
    empty = run_usage(env, "--month", "2001-01")
    assert "acme/shop" not in empty and "2,000,000 (installation 4242001)   0.0%" in empty
    done = subprocess.run(
        [*GITNEURAL, "usage", "--month", "2026-13"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "YYYY-MM" in done.stderr
