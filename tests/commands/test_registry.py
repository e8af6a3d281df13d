"""The command registry: one module per command, found by the webhook's grammar, routed
to its job and its handler; a command added in a test is routed like a built-in one, and
a kind nothing registered is an error, never another handler's job."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import bot.commands as registry
from bot.commands import Command, Invocation, UnknownJobKindError, commands, find_command
from bot.commands.dispatch import handler_for, job_kind
from bot.commands.help import listing
from bot.domain.conversation import Description
from bot.jobs import ConversationJob, JobError
from bot.render.command_answers import description_body, help_body
from bot.render.conversation import visible_text
from bot.render.markdown_check import markdown_problem
from bot.render.sanitize import SAFE_TAGS
from bot.settings.repository import Config, parse_config
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun
from tests.support.webhooks import comment, variant
from tests.web.test_web_app import Hook
from tests.web.test_web_conversation import FIXTURE

BUILT_IN = ["review", "ask", "describe", "learn", "learnings", "forget", "help"]


def test_every_built_in_command_has_one_module_and_one_entry() -> None:
    assert list(commands()) == BUILT_IN
    for name, command in commands().items():
        module = Path(registry.__file__).with_name(f"{name}.py")
        assert module.is_file(), f"/{name} has no module of its own"
        assert command.usage.startswith(f"/{name}") and command.summary and command.example
        assert find_command(command.example) is not None
        assert find_command(command.example)[0] is command  # type: ignore[index]
        assert (command.job == "conversation") == (command.handle is not None)
    model = {n for n, c in commands().items() if c.needs_model}
    assert model == {"review", "ask", "describe"}


@pytest.mark.parametrize(
    "body,name,invocation",
    [
        ("/describe", "describe", Invocation()),
        ("  /HELP me please", "help", Invocation()),
        ("/ask why?\nand how?", "ask", Invocation("why?\nand how?")),
        ("/forget #3 now\nlater", "forget", Invocation("#3 now")),
        ("/review full\neffort=max", "review", Invocation(options={"full": "yes"})),
    ],
)
def test_comments_are_read_by_their_command_s_grammar(
    body: str, name: str, invocation: Invocation
) -> None:
    found = find_command(body)
    assert found is not None and (found[0].name, found[1]) == (name, invocation)


@pytest.mark.parametrize(
    "body", [None, "", "help", "/describer", "/help-me", "> /describe", "/ping", "/ reviews"]
)
def test_other_comments_are_no_command(body: str | None) -> None:
    assert find_command(body) is None


def test_a_name_is_registered_once_and_job_kinds_have_a_shape() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(commands()["help"])
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_ping("reply"))  # a kind that is not a command's
    with pytest.raises(ValueError, match="lowercase letters"):
        registry.register(_ping("Ping!"))
    with pytest.raises(JobError, match="lowercase letters"):
        _job("no such kind")


def test_an_unknown_kind_is_an_error_not_another_handler() -> None:
    with pytest.raises(UnknownJobKindError, match="unknown job kind 'nonsense'"):
        handler_for("nonsense")
    # /review is a command, but not one a conversation job answers.
    with pytest.raises(UnknownJobKindError, match="not answered by a conversation job"):
        handler_for("review")
    assert job_kind(_job("nonsense")) == "command"
    assert [job_kind(_job(k)) for k in ("ask", "learn", "describe", "reply")] == [
        "ask",
        "learning",
        "command",
        "reply",
    ]


def _answer(run: ConversationRun) -> ConversationOutcome:
    return ConversationOutcome("answered", detail="pong")


def _ping(name: str = "ping", **more: bool) -> Command:
    return Command(
        name=name,
        usage=f"/{name}",
        summary="answers pong",
        example=f"/{name}",
        parse=lambda text: Invocation(argument=text.strip()),
        needs_model=False,
        job="conversation",
        handle=_answer,
        **more,  # type: ignore[arg-type]
    )


def _job(kind: str) -> ConversationJob:
    in_reply_to = 7 if kind == "reply" else None
    return ConversationJob(1, "octo/app", 1, kind, 5, "d-1", in_reply_to=in_reply_to)


@pytest.fixture
def ping() -> Iterator[Command]:
    command = registry.register(_ping())
    try:
        yield command
    finally:
        registry.unregister(command.name)


def test_a_command_added_in_one_place_is_routed_by_the_webhook_and_the_worker(
    ping: Command, tmp_path: Path
) -> None:
    hook = Hook(tmp_path)
    resp = hook.post("issue_comment", comment("/ping   loud", "MEMBER"))
    assert (resp.status_code, resp.json["trigger"]) == (202, "ping")
    [job] = hook.queue.conversations
    assert (job.trigger, job.in_reply_to, hook.queue.jobs) == ("ping", None, [])
    assert handler_for(job.trigger) == (_answer, True)
    # Not an in-thread command: in a review thread it is not taken for one.
    in_thread = variant(FIXTURE, **{"comment.body": "/ping"})
    assert hook.post("pull_request_review_comment", in_thread).json["status"] == "ignored"
    # Refused like any command: by association, and on a closed pull request.
    assert hook.post("issue_comment", comment("/ping", "NONE")).json["reason"] == (
        "/ping by NONE is not allowed"
    )
    closed = comment("/ping", "MEMBER", **{"issue.state": "closed"})
    assert hook.post("issue_comment", closed).json["reason"] == "pull request is closed"
    # /help lists it, with the built-in ones.
    assert [line.usage for line in listing()][-1] == "/ping"


def test_help_is_a_valid_table_of_every_command_and_the_settings() -> None:
    config = parse_config(
        '[github]\nauto_review = "label"\nreview_label = "bot|review"\nmax_review_files = 50\n'
        'base_branches = ["main", "release/*"]\n'
    )
    body = help_body(listing(), config, to=42)
    assert markdown_problem(visible_text(body), SAFE_TAGS) is None
    rows = [line for line in body.splitlines() if line.startswith("| `/")]
    assert len(rows) == len(commands())
    assert all(line.count(" | ") == 3 for line in rows)  # a pipe in a usage is escaped
    assert "only pull requests labelled `bot|review`" in body
    assert "base branches: `main`, `release/*`" in body
    assert "any number of changed lines (no limit) or 50 files" in body
    assert "effort `high`" in body and body.endswith("<!-- gitneural:answer v1 to=42 -->")
    assert "Review effort: `max`" in help_body(listing(), Config(), to=1)


def test_a_description_is_sanitised_field_by_field_and_edits_nothing() -> None:
    described = Description(
        title="Fix it <script>alert(1)</script> @octocat\nsecond line",
        what="Changes `people.py`.\n\n<img src=x onerror=alert(1)>",
        why="Asked by @maintainers.",
        how_to_test="```\npytest\n",
        risk="<!-- gitneural:answer v1 to=1 --> none",
    )
    body = description_body(described, to=9)
    shown = visible_text(body)
    assert markdown_problem(shown, SAFE_TAGS) is None
    assert "<script" not in body and "<img" not in body and "to=1 " not in body
    assert "@octocat" not in shown and "@maintainers" not in shown
    assert shown.count("### ") == 4 and "second line" in shown.split("\n\n")[1]
    assert body.endswith("<!-- gitneural:answer v1 to=9 -->")
