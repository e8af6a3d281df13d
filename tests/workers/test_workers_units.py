"""Worker settings, backoff, head-record rules, the Celery configuration and app.yml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.errors import ConfigError
from tests.support.paths import ROOT
from workers.celeryapp.app import EMBEDDED_TRANSPORT, celery_config, create_celery
from workers.celeryapp.backoff import backoff_delay
from workers.celeryapp.task_names import EYES_TASK, REVIEW_TASK
from workers.settings import WorkerSettings
from workers.state.pr_lock import HeadRecord, is_current, pr_key

# ---- settings --------------------------------------------------------------------------


def test_defaults_use_the_embedded_broker_under_the_data_dir(tmp_path: Path) -> None:
    s = WorkerSettings.from_env({"GITNEURAL_DATA_DIR": str(tmp_path)})
    assert s.embedded_broker
    assert s.broker_path == (tmp_path / "broker.sqlite3").resolve()
    assert s.state_url is None  # locks in SQLite, on this machine
    assert (s.pool, s.concurrency) == ("threads", 8)
    assert (s.soft_time_limit, s.hard_time_limit) == (1800, 2100)
    # The broker must not hand a running review to a second worker.
    assert s.visibility_timeout > s.hard_time_limit
    assert (s.review_queue, s.fast_queue) == ("gitneural.reviews", "gitneural.fast")
    assert s.conversation_queue == "gitneural.conversations"


def test_redis_broker_also_holds_the_locks_and_the_password_stays_out_of_repr() -> None:
    url = "redis://:hunter2-secret@redis.internal:6379/3"
    s = WorkerSettings.from_env({"GITNEURAL_BROKER_URL": url})
    assert not s.embedded_broker
    assert s.state_url == url
    assert "hunter2" not in repr(s)
    explicit = WorkerSettings.from_env(
        {"GITNEURAL_BROKER_URL": "amqp://rabbit//", "GITNEURAL_STATE_URL": "redis://r:6379/1"}
    )
    assert explicit.state_url == "redis://r:6379/1"
    assert WorkerSettings.from_env({"GITNEURAL_BROKER_URL": "amqp://rabbit//"}).state_url is None


def test_visibility_timeout_follows_the_hard_limit_unless_set() -> None:
    s = WorkerSettings.from_env(
        {"GITNEURAL_TASK_SOFT_TIME_LIMIT": "3000", "GITNEURAL_TASK_TIME_LIMIT": "3600"}
    )
    assert s.visibility_timeout == 3600 + 600


@pytest.mark.parametrize(
    ("env", "names"),
    [
        ({"GITNEURAL_BROKER_URL": "http://x"}, "GITNEURAL_BROKER_URL"),
        ({"GITNEURAL_STATE_URL": "postgres://x"}, "GITNEURAL_STATE_URL"),
        ({"GITNEURAL_WORKER_POOL": "gevent"}, "GITNEURAL_WORKER_POOL"),
        ({"GITNEURAL_WORKER_CONCURRENCY": "0"}, "GITNEURAL_WORKER_CONCURRENCY"),
        ({"GITNEURAL_WORKER_CONCURRENCY": "many"}, "GITNEURAL_WORKER_CONCURRENCY"),
        ({"GITNEURAL_TASK_SOFT_TIME_LIMIT": "2200"}, "GITNEURAL_TASK_SOFT_TIME_LIMIT"),
        ({"GITNEURAL_TASK_TIME_LIMIT": "nan"}, "GITNEURAL_TASK_TIME_LIMIT"),
        ({"GITNEURAL_VISIBILITY_TIMEOUT": "60"}, "GITNEURAL_VISIBILITY_TIMEOUT"),
        ({"GITNEURAL_QUEUE_PREFIX": "a b"}, "GITNEURAL_QUEUE_PREFIX"),
        ({"GITNEURAL_LOCK_LEASE": "0"}, "GITNEURAL_LOCK_LEASE"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], names: str) -> None:
    with pytest.raises(ConfigError, match=names) as info:
        WorkerSettings.from_env(env)
    assert "\n" not in str(info.value)


# ---- backoff ---------------------------------------------------------------------------


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    lows = [backoff_delay(n, 30, 900, rand=0.0) for n in range(7)]
    highs = [backoff_delay(n, 30, 900, rand=1.0) for n in range(7)]
    assert lows == [15, 30, 60, 120, 240, 450, 450]
    assert highs == [30, 60, 120, 240, 480, 900, 900]
    assert backoff_delay(10_000, 30, 900, rand=0.5) <= 900


def test_backoff_waits_at_least_what_github_or_the_model_asked() -> None:
    # retry-after 120 s: never sooner, even on the first retry.
    assert backoff_delay(0, 30, 900, retry_after=120, rand=0.0) == 120
    assert backoff_delay(0, 30, 900, retry_after=120, rand=1.0) == 121
    # An x-ratelimit-reset an hour away is waited for in capped steps.
    assert backoff_delay(0, 30, 900, retry_after=3600, rand=0.0) == 900
    # A small retry-after does not shorten the backoff.
    assert backoff_delay(3, 30, 900, retry_after=1, rand=0.0) == 120


# ---- head records ----------------------------------------------------------------------


def test_is_current() -> None:
    a, b = "a" * 40, "b" * 40
    assert is_current(None, a, None)  # nothing known
    # The job for head a was submission 1; then head b arrived as submission 2.
    newer = HeadRecord(head_sha=b, head_seq=2, seq=2)
    assert not is_current(newer, a, 1)
    assert is_current(newer, b, 2)
    # A /review submitted as 3 after b: current for b; for a (its head resolved earlier)
    # also, since no newer head arrived after it.
    after_review = HeadRecord(head_sha=b, head_seq=2, seq=3)
    assert is_current(after_review, b, 3)
    assert is_current(after_review, a, 3)
    # A /review submitted as 1, before head b arrived: a is stale for it.
    assert not is_current(newer, a, 1)
    assert is_current(HeadRecord(None, 0, 4), a, 1)  # only /reviews so far


def test_pr_key_ignores_case() -> None:
    assert pr_key("Octo/App", 7) == pr_key("octo/app", 7) == "octo/app#7"


# ---- Celery configuration --------------------------------------------------------------


def test_review_turns_are_acked_when_started_with_limits_and_routed(tmp_path: Path) -> None:
    s = WorkerSettings.from_env({"GITNEURAL_DATA_DIR": str(tmp_path)})
    app = create_celery(s)
    task = app.tasks[REVIEW_TASK]
    # A review message is a turn: the job it runs is held by its lease in the schedule,
    # so no message stays unacknowledged for the length of a review.
    assert not task.acks_late
    assert (task.soft_time_limit, task.time_limit) == (1800, 2100)
    assert task.max_retries is None  # faults are counted in the message
    assert app.conf.task_acks_on_failure_or_timeout is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.task_routes[REVIEW_TASK]["queue"] == "gitneural.reviews"
    assert app.conf.task_routes[EYES_TASK]["queue"] == "gitneural.fast"
    assert app.tasks[EYES_TASK].acks_late
    assert app.conf.broker_transport == EMBEDDED_TRANSPORT
    assert app.conf.accept_content == ["json"]
    # Nothing connected: making an app is free.
    assert app._pool is None


def test_redis_config_prefixes_every_key(tmp_path: Path) -> None:
    s = WorkerSettings.from_env(
        {"GITNEURAL_BROKER_URL": "redis://127.0.0.1:6379/0", "GITNEURAL_QUEUE_PREFIX": "team1"}
    )
    conf = celery_config(s)
    assert conf["broker_transport_options"]["global_keyprefix"] == "team1:"
    assert conf["broker_transport_options"]["visibility_timeout"] == s.visibility_timeout
    assert "broker_transport" not in conf


def test_two_apps_keep_their_own_settings(tmp_path: Path) -> None:
    first = create_celery(WorkerSettings.from_env({"GITNEURAL_DATA_DIR": str(tmp_path / "a")}))
    second = create_celery(
        WorkerSettings.from_env(
            {"GITNEURAL_DATA_DIR": str(tmp_path / "b"), "GITNEURAL_TASK_SOFT_TIME_LIMIT": "60"}
        )
    )
    assert first.tasks[REVIEW_TASK].soft_time_limit == 1800
    assert second.tasks[REVIEW_TASK].soft_time_limit == 60


def test_importing_workers_app_configures_nothing() -> None:
    code = (
        "import workers.celeryapp.app as m, sys; "
        "assert m._app is None; "
        "assert 'bot.usecases.context' not in sys.modules; print('ok')"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.stdout.strip() == "ok", result.stderr


def test_celery_cli_finds_the_app_from_the_environment(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "workers.celeryapp.app", "report"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "GITNEURAL_DATA_DIR": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "transport:workers.celeryapp.embedded_broker:Transport" in result.stdout
    assert f"sqlite:///{(tmp_path / 'broker.sqlite3').resolve()}" in result.stdout
    assert "'gitneural.review': {'queue': 'gitneural.reviews'}" in result.stdout
    assert "'gitneural.conversation': {'queue': 'gitneural.conversations'}" in result.stdout


# ---- app.yml ---------------------------------------------------------------------------


def test_app_manifest_asks_for_what_reviews_need_and_no_more() -> None:
    manifest = yaml.safe_load((ROOT / "app.yml").read_text())
    assert manifest["name"] == "GitNeural"
    assert manifest["public"] is False
    assert manifest["description"]
    assert manifest["url"].startswith("https://")
    assert manifest["hook_attributes"]["url"].endswith("/webhook")
    assert sorted(manifest["default_events"]) == [
        "check_run",
        "issue_comment",
        "pull_request",
        "pull_request_review_comment",
        "pull_request_review_thread",
    ]
    assert manifest["default_permissions"] == {
        "pull_requests": "write",
        "issues": "write",
        "checks": "write",
        "contents": "read",
        "metadata": "read",
    }
    # Suggestions only: nothing that writes code, workflows or settings.
    for dangerous in ("administration", "workflows", "actions", "secrets", "environments"):
        assert dangerous not in manifest["default_permissions"]
