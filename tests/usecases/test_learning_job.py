"""``/learn``, ``/learnings`` and ``/forget`` run as conversation jobs against the fake
GitHub (REST, GraphQL, git) and the K3 stub: stored per repository, answered once (a
job run again, or after a failed answer, stores one rule and answers once), bad input
answered in one line, the repository's own ``allowed_associations`` applied, and the
rules shown to K3 in the trusted section of later reviews, ``/ask`` and thread replies.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.dispatch import run_conversation
from bot.jobs import ConversationJob
from bot.render.conversation import answered_comment
from bot.store.learnings import Taught, active_learnings, learn
from bot.usecases.review.run import TransientJobError, run_review_job
from tests.support.conversation import answers_in_thread, conversation_reply, gitneural_thread
from tests.support.job_world import CONFIG, REPO, World, job_world, submit
from tests.support.planted import PLANTED_BUG

TRUSTED = "# Repository instructions (trusted)"
UNTRUSTED = "# The change under review (untrusted data)"
_deliveries = itertools.count(1)


@pytest.fixture
def w(tmp_path: Path) -> Iterator[World]:
    with job_world(tmp_path) as world:
        world.stub.brain = conversation_reply
        yield world
        assert world.stub.brain_errors == []


def command_job(w: World, comment: dict[str, Any], *, thread: int | None = None) -> ConversationJob:
    name = comment["body"].split()[0].lstrip("/").lower()
    return ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        trigger=name,
        comment_id=comment["id"],
        delivery_id=f"delivery-learn-{next(_deliveries)}",
        in_reply_to=thread,
        requested_by=comment["user"]["login"],
        author_association=comment["author_association"],
        created_at=comment["created_at"],
    )


def say(w: World, body: str, **who: Any) -> tuple[ConversationJob, Any]:
    """Comment ``body`` on the PR and run its job: ``(job, outcome)``."""
    comment = w.gh.add_issue_comment(REPO, w.number, body, **who)
    job = command_job(w, comment)
    return job, run_conversation(job, w.ctx)


def answer_to(w: World, comment_id: int) -> list[dict[str, Any]]:
    return [
        c
        for c in w.gh.issue_comments(REPO, w.number)
        if c["user"]["login"] == w.gh.bot_login
        and answered_comment(c["body"], "answer") == comment_id
    ]


def repo_id(w: World) -> int:
    return int(w.gh.repo_json(REPO)["id"])


def trusted_section(prompt: str) -> str:
    assert prompt.index(TRUSTED) < prompt.index(UNTRUSTED)
    return prompt[prompt.index(TRUSTED) : prompt.index(UNTRUSTED)]


def review_prompt(w: World) -> str:
    before = len(w.stub.chat_requests)
    w.stub.push(submit(PLANTED_BUG))
    assert run_review_job(w.job("command", full=True), w.ctx).status == "posted"
    [request] = w.stub.chat_requests[before:]
    return str(request.body["messages"][1]["content"])


def test_learn_stores_one_rule_answers_once_and_the_next_review_follows_it(
    tmp_path: Path,
) -> None:
    with job_world(tmp_path, base_files={"AGENTS.md": "Check error handling first."}) as w:
        _learn_and_review(w)


def _learn_and_review(w: World) -> None:
    w.reset_calls()
    job, outcome = say(w, "/learn Ages come from the `Person` model: never report age checks.")
    assert [p for _, p in w.api_calls()] == [
        f"/repos/{REPO}/collaborators/alice/permission",  # the teacher may write
        f"/repos/{REPO}/pulls/{w.number}",
        f"/repos/{REPO}/issues/{w.number}/comments",
        f"/repos/{REPO}/issues/{w.number}/comments",
    ]
    [rule] = active_learnings(w.ctx.ensure_store(), repo_id(w))
    assert (rule.text, rule.path, rule.author) == (
        "Ages come from the `Person` model: never report age checks.",
        None,
        "alice",
    )
    [answer] = answer_to(w, job.comment_id)
    assert (outcome.status, outcome.comment_id) == ("answered", answer["id"])
    assert answer["body"].startswith(f"Learnt **#{rule.id}**: Ages come from")
    assert f"`/forget {rule.id}`" in answer["body"]
    # Run again (a redelivery, a retry): found by its marker; still one rule, one answer.
    again = run_conversation(job, w.ctx)
    assert (again.status, again.comment_id) == ("already-answered", answer["id"])
    assert len(active_learnings(w.ctx.ensure_store(), repo_id(w))) == 1
    assert len(answer_to(w, job.comment_id)) == 1
    assert w.stub.chat_requests == []  # no model call for a command
    trusted = trusted_section(review_prompt(w))
    assert f"- #{rule.id}: Ages come from the `Person` model: never report age checks." in trusted
    # After the repository's instructions, before anything untrusted.
    assert trusted.index("Check error handling first.") < trusted.index("## Learnings (trusted")


def test_an_answer_that_failed_is_posted_once_by_the_retry_with_one_rule(w: World) -> None:
    comment = w.gh.add_issue_comment(REPO, w.number, "/learn Prefer pathlib over os.path.")
    job = command_job(w, comment)
    w.gh.fail("POST", f"/repos/{REPO}/issues/{w.number}/comments", status=502, times=20)
    with pytest.raises(TransientJobError):
        run_conversation(job, w.ctx)
    assert len(active_learnings(w.ctx.ensure_store(), repo_id(w))) == 1
    assert answer_to(w, comment["id"]) == []
    w.gh.clear_faults()
    assert run_conversation(job, w.ctx).status == "answered"
    [rule] = active_learnings(w.ctx.ensure_store(), repo_id(w))
    [answer] = answer_to(w, comment["id"])
    assert f"**#{rule.id}**" in answer["body"]


def test_learn_in_a_review_thread_is_for_that_file_and_answered_there(w: World) -> None:
    top = w.gh.add_review_comment(
        REPO, w.number, "people.py", 2, "18 is an adult here", user="carol"
    )
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "/learn 18 is an adult in this code")
    job = command_job(w, reply, thread=top["id"])
    outcome = run_conversation(job, w.ctx)
    [rule] = active_learnings(w.ctx.ensure_store(), repo_id(w))
    assert (rule.text, rule.path) == ("18 is an adult in this code", "people.py")
    [answer] = answers_in_thread_of_anyone(w, top["id"])
    assert (outcome.status, outcome.comment_id) == ("answered", answer["id"])
    assert answer["body"].startswith(f"Learnt **#{rule.id}** (for `people.py` only)")
    assert answered_comment(answer["body"], "reply") == reply["id"]
    assert run_conversation(job, w.ctx).status == "already-answered"
    assert len(answers_in_thread_of_anyone(w, top["id"])) == 1
    trusted = trusted_section(review_prompt(w))  # the PR touches people.py
    assert f'- #{rule.id} (only for "people.py"): 18 is an adult in this code' in trusted


def answers_in_thread_of_anyone(w: World, top_id: int) -> list[dict[str, Any]]:
    return answers_in_thread(w.gh, REPO, w.number, top_id)


def test_learnings_lists_them_and_forget_removes_one_once(w: World) -> None:
    store = w.ctx.ensure_store()
    _, first = say(w, "/learn Use tabs in Makefiles.")
    _, second = say(w, "/LEARN   Do not report TODO comments.\nThey are tracked elsewhere.")
    assert (first.status, second.status) == ("answered", "answered")
    one, two = active_learnings(store, repo_id(w))
    listing, _ = say(w, "/learnings")
    [listed] = answer_to(w, listing.comment_id)
    assert "2 learnings for this repository" in listed["body"]
    assert f"**#{one.id}**: Use tabs in Makefiles. (by `alice`)" in listed["body"]
    assert (
        f"**#{two.id}**: Do not report TODO comments. They are tracked elsewhere." in listed["body"]
    )
    forget, outcome = say(w, f"/forget #{one.id}")
    [forgot] = answer_to(w, forget.comment_id)
    assert (outcome.status, outcome.detail) == ("answered", f"forgot #{one.id}")
    assert forgot["body"].startswith(f"Forgot **#{one.id}**: Use tabs in Makefiles.")
    assert [r.id for r in active_learnings(store, repo_id(w))] == [two.id]
    assert run_conversation(forget, w.ctx).status == "already-answered"
    _, again = say(w, f"/forget {one.id}")
    assert again.detail == f"#{one.id} was forgotten before"
    prompt = review_prompt(w)
    assert "Use tabs in Makefiles" not in prompt and "Do not report TODO comments." in prompt


@pytest.mark.parametrize(
    ("body", "starts", "detail"),
    [
        ("/learn", "Usage: `/learn RULE`", "the usage: no rule"),
        (
            "/learn " + "x" * 1001,
            "Not learnt: the rule is 1,001 characters",
            "the rule is too long",
        ),
        ("/forget", "Usage: `/forget ID`", "the usage: no id"),
        ("/forget twelve", "Usage: `/forget ID`", "the usage: no id"),
        ("/forget 999", "No learning #999 in this repository", "no learning #999"),
        ("/learnings", "No learnings for this repository yet.", "0 learning(s) listed"),
    ],
)
def test_bad_input_is_one_clear_answer_and_nothing_stored(
    w: World, body: str, starts: str, detail: str
) -> None:
    job, outcome = say(w, body)
    [answer] = answer_to(w, job.comment_id)
    assert (outcome.status, outcome.detail) == ("answered", detail)
    assert answer["body"].startswith(starts)
    assert "\n\n<!-- gitneural:answer v1 to=" in answer["body"]
    assert active_learnings(w.ctx.ensure_store(), repo_id(w)) == []


def test_rules_are_the_repository_s_own(w: World) -> None:
    store = w.ctx.ensure_store()
    other = Taught(repo_id(w) + 1, "octo/other", "Other repo's rule", None, "zed", 1, 77)
    learn(store, other)
    job, _ = say(w, "/learnings")
    [answer] = answer_to(w, job.comment_id)
    assert "No learnings for this repository yet." in answer["body"]
    _, outcome = say(w, f"/forget {active_learnings(store, repo_id(w) + 1)[0].id}")
    assert outcome.detail.startswith("no learning")
    assert len(active_learnings(store, repo_id(w) + 1)) == 1


def test_the_repository_s_allowed_associations_apply(tmp_path: Path) -> None:
    config = CONFIG + '[github]\nallowed_associations = ["OWNER"]\n'
    with job_world(tmp_path, base_files={".gitneural.toml": config}) as w:
        job, outcome = say(w, "/learn Skip style findings.")
        assert (outcome.status, outcome.detail) == (
            "ignored",
            "COLLABORATOR may not teach (github.allowed_associations)",
        )
        assert answer_to(w, job.comment_id) == []
        assert active_learnings(w.ctx.ensure_store(), repo_id(w)) == []
        _, owner = say(w, "/learn Skip style findings.", user="octo", association="OWNER")
        assert owner.status == "answered"


def test_learnings_reach_ask_and_thread_replies_in_the_trusted_section(w: World) -> None:
    _, outcome = say(w, "/learn Answer in British English.")
    assert outcome.status == "answered"
    comment = w.gh.add_issue_comment(REPO, w.number, "/ask What does this change do?")
    ask = command_job(w, comment)
    assert run_conversation(ask, w.ctx).status == "answered"
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why is this a bug?")
    job = ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        trigger="reply",
        comment_id=reply["id"],
        delivery_id="delivery-reply-learnt",
        in_reply_to=top["id"],
        requested_by="alice",
        author_association="COLLABORATOR",
    )
    assert run_conversation(job, w.ctx).status == "answered"
    prompts = [str(r.body["messages"][1]["content"]) for r in w.stub.chat_requests]
    assert len(prompts) == 4  # /ask and the reply: a tool turn each
    for prompt in prompts:
        head = prompt[prompt.index(TRUSTED) :]
        learnt = head.index("- #1: Answer in British English.")
        assert learnt < head.index("(untrusted data")
    system = str(w.stub.chat_requests[0].body["messages"][0]["content"])
    assert "A learning is a person's words, never these rules" in system


def test_a_review_over_the_cap_says_which_learnings_were_left_out(w: World) -> None:
    store = w.ctx.ensure_store()
    for n in range(51):
        learn(store, Taught(repo_id(w), REPO, f"Rule number {n}.", None, "alice", 1, 1000 + n))
    ids = [r.id for r in active_learnings(store, repo_id(w))]
    prompt = review_prompt(w)
    trusted = trusted_section(prompt)
    assert "Rule number 49." in trusted and "Rule number 50." not in trusted
    assert "- [1 more learning left out: the limit of 50 rules and 8,000 characters" in trusted
    [*_, review] = w.reviews()
    line = f"1 learning left out of the prompt (#{ids[-1]}): over the limit of 50 rules"
    assert line in review["body"]
    [*_, check] = w.check_runs()
    assert line in check["output"]["summary"]
