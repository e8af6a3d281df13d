"""Signature, /review grammar, the job's JSON form and settings from the environment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bot.commands import CommandError, Invocation, find_command
from bot.errors import ConfigError
from bot.jobs import JobError, ReviewJob
from bot.settings.environment import default_data_dir
from bot.web.settings import WebSettings
from bot.web.signature import sign, verify

DOCS_SECRET = "It's a Secret to Everybody"
DOCS_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"

# ---- signature -------------------------------------------------------------------------


def test_docs_vector() -> None:
    assert sign(DOCS_SECRET, b"Hello, World!") == DOCS_SIGNATURE
    assert verify(DOCS_SECRET, b"Hello, World!", DOCS_SIGNATURE)
    assert verify(DOCS_SECRET.encode(), b"Hello, World!", DOCS_SIGNATURE)


@pytest.mark.parametrize(
    "header",
    [None, "", "sha256=", DOCS_SIGNATURE.upper(), DOCS_SIGNATURE[:-2], "sha1=abc", "sha256=é" * 3],
)
def test_bad_headers_do_not_verify(header: str | None) -> None:
    assert not verify(DOCS_SECRET, b"Hello, World!", header)


def test_other_body_or_secret_does_not_verify() -> None:
    assert not verify(DOCS_SECRET, b"Hello, World?", DOCS_SIGNATURE)
    assert not verify("another secret", b"Hello, World!", DOCS_SIGNATURE)


# ---- /review ---------------------------------------------------------------------------


def ReviewCommand(effort: str | None = None, full: bool = False) -> Invocation:
    options = {"effort": effort} if effort else {}
    return Invocation(options={**options, **({"full": "yes"} if full else {})})


def parse_review_command(body: str | None) -> Invocation | None:
    """The registry's reading of a comment, when it is ``/review``."""
    found = find_command(body)
    return found[1] if found is not None and found[0].name == "review" else None


@pytest.mark.parametrize(
    "body,expected",
    [
        ("/review", ReviewCommand()),
        ("/REVIEW", ReviewCommand()),
        ("\n  /review full", ReviewCommand(full=True)),
        ("/review effort=max", ReviewCommand(effort="max")),
        ("/review Effort=HIGH full", ReviewCommand(effort="high", full=True)),
        ("/review effort=low full\nsecond line: effort=max nonsense", ReviewCommand("low", True)),
        ("/review\teffort=low\r\n", ReviewCommand(effort="low")),
    ],
)
def test_review_commands(body: str, expected: ReviewCommand) -> None:
    assert parse_review_command(body) == expected


@pytest.mark.parametrize(
    "body", [None, "", "   ", "/reviewer", "/review-me", "review", "> /review"]
)
def test_not_commands(body: str | None) -> None:
    assert parse_review_command(body) is None


@pytest.mark.parametrize(
    "body,message",
    [
        ("/review effort=medium", "effort must be one of low, high, max"),
        ("/review effort=", "effort must be one of"),
        ("/review full full", "option 'full' given twice"),
        ("/review effort=low effort=max", "option 'effort' given twice"),
        ("/review please", "unknown option 'please'"),
        ("/review full=true", "unknown option 'full=…'"),
        ("/review efort=low", "unknown option 'efort=…'"),
        ("/review \x1b[31mred", "unknown option (not shown)"),
        ("/review ghp_16C7e42F292c6912E7710c838347Ae178B4a", "unknown option (not shown)"),
    ],
)
def test_refused_commands(body: str, message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        parse_review_command(body)


# ---- ReviewJob -------------------------------------------------------------------------


def job(**changes: object) -> ReviewJob:
    values: dict[str, object] = {
        "installation_id": 7,
        "repo": "o/r",
        "pr_number": 3,
        "head_sha": "a" * 40,
        "trigger": "synchronize",
        "delivery_id": "d",
    }
    values.update(changes)
    return ReviewJob(**values)  # type: ignore[arg-type]


def test_job_round_trips_through_json() -> None:
    original = job(trigger="command", head_sha=None, effort="low", full=True, comment_id=9)
    assert ReviewJob.from_dict(json.loads(json.dumps(original.to_dict()))) == original


def test_job_from_dict_ignores_unknown_keys_from_newer_senders() -> None:
    data = job().to_dict() | {"added_in_a_later_version": 1}
    assert ReviewJob.from_dict(data) == job()


@pytest.mark.parametrize(
    "changes",
    [
        {"installation_id": "7"},
        {"installation_id": True},
        {"installation_id": 0},
        {"pr_number": -1},
        {"repo": "no-slash"},
        {"repo": "a/b/c"},
        {"repo": "/b"},
        {"trigger": "pushed"},
        {"effort": "medium"},
        {"full": 1},
        {"comment_id": "9"},
        {"head_sha": 5},
    ],
)
def test_invalid_jobs_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(JobError):
        job(**changes)


@pytest.mark.parametrize("data", [[], "x", {"repo": "o/r"}])
def test_from_dict_refuses_non_jobs(data: object) -> None:
    with pytest.raises(JobError):
        ReviewJob.from_dict(data)


# ---- settings --------------------------------------------------------------------------


def test_secret_is_required() -> None:
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET is not set"):
        WebSettings.from_env({})
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET"):
        WebSettings(webhook_secret="")


def test_defaults_from_env() -> None:
    s = WebSettings.from_env({"GITHUB_WEBHOOK_SECRET": "s3cr3t-value"})
    assert s.max_body_bytes == 25 * 1024 * 1024
    assert s.allowed_associations == ("OWNER", "MEMBER", "COLLABORATOR")
    assert (s.review_drafts, s.auto_review, s.bot_login, s.dedupe_url) == (
        False,
        True,
        None,
        None,
    )
    assert s.data_dir == default_data_dir()
    assert "s3cr3t-value" not in repr(s)


def test_every_variable_is_read(tmp_path: Path) -> None:
    s = WebSettings.from_env(
        {
            "GITHUB_WEBHOOK_SECRET": "x",
            "GITNEURAL_MAX_BODY_BYTES": "1000",
            "GITNEURAL_BOT_LOGIN": "gitneural[bot]",
            "GITNEURAL_ALLOWED_ASSOCIATIONS": "owner, member",
            "GITNEURAL_REVIEW_DRAFTS": "yes",
            "GITNEURAL_AUTO_REVIEW": "off",
            "GITNEURAL_DEDUPE_URL": "redis://localhost:6379/3",
            "GITNEURAL_DATA_DIR": str(tmp_path),
        }
    )
    assert s.max_body_bytes == 1000
    assert s.bot_login == "gitneural[bot]"
    assert s.allowed_associations == ("OWNER", "MEMBER")
    assert (s.review_drafts, s.auto_review) == (True, False)
    assert s.dedupe_url == "redis://localhost:6379/3"
    assert s.data_dir == tmp_path


def test_dedupe_falls_back_to_a_redis_broker_only() -> None:
    redis_broker = {"GITHUB_WEBHOOK_SECRET": "x", "GITNEURAL_BROKER_URL": "redis://b:6379/1"}
    assert WebSettings.from_env(redis_broker).dedupe_url == "redis://b:6379/1"
    amqp_broker = {"GITHUB_WEBHOOK_SECRET": "x", "GITNEURAL_BROKER_URL": "amqp://b//"}
    assert WebSettings.from_env(amqp_broker).dedupe_url is None


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("GITNEURAL_MAX_BODY_BYTES", "lots", "GITNEURAL_MAX_BODY_BYTES must be a whole number"),
        ("GITNEURAL_MAX_BODY_BYTES", "0", "GITNEURAL_MAX_BODY_BYTES must be a whole number > 0"),
        ("GITNEURAL_REVIEW_DRAFTS", "maybe", "GITNEURAL_REVIEW_DRAFTS must be true or false"),
        ("GITNEURAL_ALLOWED_ASSOCIATIONS", "OWNER,ADMIN", "unknown values \\['ADMIN'\\]"),
        ("GITNEURAL_DEDUPE_URL", "http://x", "must be a redis://"),
    ],
)
def test_bad_values_name_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        WebSettings.from_env({"GITHUB_WEBHOOK_SECRET": "x", name: value})
