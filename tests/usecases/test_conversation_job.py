"""Conversation jobs run against the fake GitHub (REST, GraphQL, git) and the K3 stub: a
reply in one of GitNeural's threads, ``/ask``, and everything that must not be answered.

The stub checks every request as strictly as a review's: preserved thinking across the
tool turn (``check_history``), no sampling parameters, ``max_completion_tokens`` set, no
named ``tool_choice``."""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.dispatch import run_conversation
from bot.jobs import ConversationJob
from bot.render.conversation import WITHDRAWN, answered_comment
from bot.render.github import Marker
from bot.settings.budgets import Budgets
from bot.store import open_store, upgrade
from bot.store.findings import stored_finding
from bot.store.usage import record_usage
from bot.usage import Usage
from bot.usecases.conversation.dispatch import QUOTA_NOTICE
from bot.usecases.review.run import TransientJobError, run_review_job
from tests.fakes.k3 import Reply
from tests.support.conversation import (
    ASK_ANSWER,
    REPLY_ANSWER,
    WITHDRAW_ANSWER,
    answers_in_thread,
    conversation_reply,
    gitneural_thread,
)
from tests.support.job_world import REPO, World, job_world, submit
from tests.support.planted import PLANTED, PLANTED_BUG
from tests.support.store import store_url  # noqa: F401 - the fixture


@pytest.fixture
def w(tmp_path: Path) -> Iterator[World]:
    with job_world(tmp_path) as world:
        world.stub.brain = conversation_reply
        yield world
        assert world.stub.brain_errors == []


def reply_job(w: World, reply: dict[str, Any], **changes: Any) -> ConversationJob:
    values: dict[str, Any] = {
        "installation_id": 1,
        "repo": REPO,
        "pr_number": w.number,
        "trigger": "reply",
        "comment_id": reply["id"],
        "delivery_id": f"delivery-reply-{reply['id']}",
        "in_reply_to": reply["in_reply_to_id"],
        "requested_by": reply["user"]["login"],
        "author_association": reply["author_association"],
        "created_at": reply["created_at"],
    }
    return ConversationJob(**{**values, **changes})


def ask_job(w: World, comment: dict[str, Any]) -> ConversationJob:
    return ConversationJob(
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        trigger="ask",
        comment_id=comment["id"],
        delivery_id=f"delivery-ask-{comment['id']}",
        requested_by=comment["user"]["login"],
        author_association=comment["author_association"],
        created_at=comment["created_at"],
    )


def chats(w: World) -> list[dict[str, Any]]:
    return [r.body for r in w.stub.chat_requests]


def test_a_reply_in_gitneural_s_thread_is_answered_once_in_that_thread(w: World) -> None:
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why is this a bug?")
    job = reply_job(w, reply)
    w.reset_calls()
    outcome = run_conversation(job, w.ctx)
    calls = w.api_calls()
    [answer] = answers_in_thread(w.gh, REPO, w.number, top["id"])
    assert (outcome.status, outcome.comment_id) == ("answered", answer["id"])
    assert answer["body"].startswith(REPLY_ANSWER)
    assert answered_comment(answer["body"], "reply") == reply["id"]
    assert WITHDRAWN not in answer["body"]
    # Four requests: the replier's write access, the PR, its threads (GraphQL), the reply
    # naming the first comment.
    assert calls == [
        ("GET", f"/repos/{REPO}/collaborators/{reply['user']['login']}/permission"),
        ("GET", f"/repos/{REPO}/pulls/{w.number}"),
        ("POST", "/graphql"),
        ("POST", f"/repos/{REPO}/pulls/{w.number}/comments/{top['id']}/replies"),
    ]
    # The model read the file, then answered: preserved thinking across the tool turn.
    first, second = chats(w)
    assert [m["role"] for m in second["messages"]][-2:] == ["assistant", "tool"]
    assert w.stub.thinking_checks >= 1
    for body in (first, second):
        assert body["max_completion_tokens"] > 0 and body["reasoning_effort"] == "high"
        assert body["tool_choice"] in ("auto", "required")
        assert not {"temperature", "top_p", "n"} & set(body)
    prompt = first["messages"][1]["content"]
    assert "Why is this a bug?" in prompt and PLANTED_BUG["title"] in prompt
    assert "R2" in prompt and "return age > 18" in prompt  # the hunk, labelled
    assert "Tighten is_adult" in prompt  # the PR's title, fenced
    # Run again (a redelivery, a retry): found by its marker, nobody asked twice.
    again = run_conversation(job, w.ctx)
    assert (again.status, again.comment_id) == ("already-answered", answer["id"])
    assert len(answers_in_thread(w.gh, REPO, w.number, top["id"])) == 1
    assert len(chats(w)) == 2


def test_a_reply_to_a_real_review_s_inline_comment_is_answered(w: World) -> None:
    w.stub.push(submit(PLANTED_BUG))
    assert run_review_job(w.job("opened"), w.ctx).status == "posted"
    [review] = w.reviews()
    [top] = review["comments"]
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Is this right?", user="bob")
    outcome = run_conversation(reply_job(w, reply), w.ctx)
    assert outcome.status == "answered"
    assert len(answers_in_thread(w.gh, REPO, w.number, top["id"])) == 1


def test_withdraw_records_the_finding_as_dismissed(
    tmp_path: Path,
    store_url: str,  # noqa: F811
) -> None:
    with job_world(tmp_path) as w:
        w.stub.brain = conversation_reply
        w.ctx.database_url = store_url
        top = gitneural_thread(w.gh, REPO, w.number, fingerprint="fp-withdrawn-1")
        reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "This is intended: 18 is minor")
        job = reply_job(w, reply)
        first = run_conversation(job, w.ctx)
        second = run_conversation(job, w.ctx)
        [answer] = answers_in_thread(w.gh, REPO, w.number, top["id"])
        repo_id = w.gh.repo_json(REPO)["id"]
    assert (first.status, second.status) == ("answered", "already-answered")
    assert answer["body"].startswith(WITHDRAWN + "\n\n" + WITHDRAW_ANSWER)
    store = open_store(store_url)
    try:
        row = stored_finding(store, repo_id, w.number, "fp-withdrawn-1")
    finally:
        store.close()
    assert row is not None
    assert (row.state, row.dismissal_reason, row.dismissed_by) == (
        "dismissed",
        "withdrawn",
        "alice",
    )
    assert (row.comment_id, row.dismissed_comment_id) == (top["id"], reply["id"])
    assert (row.path, row.start_line, row.end_line, row.side) == ("people.py", 2, 2, "RIGHT")
    assert (row.severity, row.thread_node_id) == ("critical", f"PRRT_{top['id']}")
    assert row.title == PLANTED_BUG["title"]


def test_replies_that_are_not_to_answer_cost_no_model_call(w: World) -> None:
    mine = gitneural_thread(w.gh, REPO, w.number)
    # Someone else's thread (a person's) and an imitator's (another bot, GitNeural's marker).
    theirs = w.gh.add_review_comment(REPO, w.number, "people.py", 2, "Nit: naming", user="carol")
    mimic = gitneural_thread(w.gh, REPO, w.number, user="mimic[bot]")
    cases = {
        "someone else's": w.gh.add_thread_reply(REPO, w.number, theirs["id"], "Agreed"),
        "an imitator's": w.gh.add_thread_reply(REPO, w.number, mimic["id"], "Really?"),
    }
    outcomes = {name: run_conversation(reply_job(w, r), w.ctx) for name, r in cases.items()}
    # A thread whose first comment is GitNeural's but is no finding of it (no marker).
    plain = w.gh.add_review_comment(
        REPO, w.number, "people.py", 2, "a note", user=w.gh.bot_login, association="NONE"
    )
    note_reply = w.gh.add_thread_reply(REPO, w.number, plain["id"], "Huh?")
    outcomes["plain"] = run_conversation(reply_job(w, note_reply), w.ctx)
    # Not allowed by the repository's settings (the webhook's gate let it through).
    late = w.gh.add_thread_reply(REPO, w.number, mine["id"], "hm", association="CONTRIBUTOR")
    outcomes["contributor"] = run_conversation(reply_job(w, late), w.ctx)
    assert {name: o.status for name, o in outcomes.items()} == {
        "someone else's": "ignored",
        "an imitator's": "ignored",
        "plain": "ignored",
        "contributor": "ignored",
    }
    assert "started by carol" in outcomes["someone else's"].detail
    assert "started by mimic" in outcomes["an imitator's"].detail
    assert "not one of GitNeural's findings" in outcomes["plain"].detail
    assert "allowed_associations" in outcomes["contributor"].detail
    assert w.stub.chat_requests == []
    assert all(
        c["user"]["login"] != w.gh.bot_login
        for c in w.gh.review_comments(REPO, w.number)
        if c.get("in_reply_to_id") is not None
    )


def test_gitneural_s_account_comes_from_get_app_once(w: World) -> None:
    """Without GITNEURAL_BOT_LOGIN: an imitating bot's review and thread are not GitNeural's."""
    w.ctx.bot_login = None
    head = w.gh.head_sha(REPO, w.number)
    imitation = Marker(head=head, trigger="opened", delivery="imitated").render()
    w.gh.add_review(REPO, w.number, f"Looks good\n\n{imitation}", user="mimic[bot]")
    w.stub.push(submit(PLANTED_BUG))
    outcome = run_review_job(w.job("opened"), w.ctx)
    assert outcome.status == "posted"  # the imitation did not pass for "already reviewed"
    mimic = gitneural_thread(w.gh, REPO, w.number, user="mimic[bot]")
    reply = w.gh.add_thread_reply(REPO, w.number, mimic["id"], "Why?")
    ignored = run_conversation(reply_job(w, reply), w.ctx)
    [review] = [r for r in w.reviews() if r["user"]["login"] == w.gh.bot_login]
    [top] = review["comments"]
    real = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?")
    answered = run_conversation(reply_job(w, real), w.ctx)
    assert (ignored.status, answered.status) == ("ignored", "answered")
    assert len(w.gh.requests(method="GET", path="/app")) == 1


def test_ask_gets_eyes_then_one_answer_quoting_the_question(w: World) -> None:
    comment = w.gh.add_issue_comment(REPO, w.number, "/ask What does this change do?\nThanks")
    job = ask_job(w, comment)
    w.reset_calls()
    outcome = run_conversation(job, w.ctx)
    calls = w.api_calls()
    [answer] = [c for c in w.gh.issue_comments(REPO, w.number) if c["id"] != comment["id"]]
    assert (outcome.status, outcome.comment_id) == ("answered", answer["id"])
    assert answer["body"].startswith("> What does this change do?\n\n" + ASK_ANSWER)
    assert answered_comment(answer["body"], "answer") == comment["id"]
    assert [r["content"] for r in w.gh.reactions(REPO, comment["id"])] == ["eyes"]
    eyes = ("POST", f"/repos/{REPO}/issues/comments/{comment['id']}/reactions")
    post = ("POST", f"/repos/{REPO}/issues/{w.number}/comments")
    assert calls.index(eyes) < calls.index(post) and len(calls) <= 5
    [first, _second] = chats(w)
    prompt = first["messages"][1]["content"]
    assert "What does this change do?" in prompt and "return age > 18" in prompt
    assert "# The change under review (untrusted data)" in prompt
    assert run_conversation(job, w.ctx).status == "already-answered"
    assert len(w.gh.issue_comments(REPO, w.number)) == 2 and len(chats(w)) == 2


def test_an_empty_ask_gets_the_usage_and_no_model_call(w: World) -> None:
    comment = w.gh.add_issue_comment(REPO, w.number, "/ask   \n")
    outcome = run_conversation(ask_job(w, comment), w.ctx)
    [hint] = [c for c in w.gh.issue_comments(REPO, w.number) if c["id"] != comment["id"]]
    assert outcome.status == "answered" and hint["body"].startswith("Usage: `/ask QUESTION`")
    assert w.stub.chat_requests == []


def test_a_model_quota_error_gives_one_clear_notice_and_no_retry(w: World) -> None:
    w.stub.push(
        Reply.http_error(429, "exceeded_current_quota_error", "Your account is out of credit")
    )
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?")
    job = reply_job(w, reply)
    outcome = run_conversation(job, w.ctx)
    again = run_conversation(job, w.ctx)
    [notice] = answers_in_thread(w.gh, REPO, w.number, top["id"])
    assert outcome.status == "failed" and "quota" in outcome.detail
    assert notice["body"].startswith(QUOTA_NOTICE)
    assert again.status == "already-answered"
    assert len(w.stub.chat_requests) == 1  # asked once: an exhausted quota is not retried


def test_a_reply_whose_answer_was_lost_is_read_back_not_posted_twice(w: World) -> None:
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?")
    replies = f"/repos/{REPO}/pulls/{w.number}/comments/{top['id']}/replies"
    w.gh.fail("POST", replies, status=502, apply=True)  # stored, then the answer is lost
    outcome = run_conversation(reply_job(w, reply), w.ctx)
    [answer] = answers_in_thread(w.gh, REPO, w.number, top["id"])
    assert (outcome.status, outcome.comment_id) == ("answered", answer["id"])
    assert len(w.gh.requests(method="POST", path=replies)) == 1


def test_no_secret_of_the_pull_request_reaches_the_model(tmp_path: Path) -> None:
    token = "ghp_" + secrets.token_hex(18)
    leaky = PLANTED + f'\nTOKEN = "{token}"\n'
    with job_world(tmp_path, pr_files={"people.py": leaky}) as w:
        w.stub.brain = conversation_reply
        top = gitneural_thread(w.gh, REPO, w.number)
        reply = w.gh.add_thread_reply(REPO, w.number, top["id"], f"Is {token} the problem?")
        asked = w.gh.add_issue_comment(REPO, w.number, f"/ask Why {token}?")
        assert run_conversation(reply_job(w, reply), w.ctx).status == "answered"
        assert run_conversation(ask_job(w, asked), w.ctx).status == "answered"
        raw = [r.raw for r in w.stub.chat_requests]
    assert len(raw) == 4 and all(token not in text for text in raw)
    assert all("[REDACTED:" in text for text in raw)


def test_an_edited_or_deleted_question_and_a_closed_pull_request(w: World) -> None:
    comment = w.gh.add_issue_comment(REPO, w.number, "/ask Why?")
    w.gh.store.issue_comments[comment["id"]]["body"] = "never mind"
    edited = run_conversation(ask_job(w, comment), w.ctx)
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?")
    del w.gh.store.review_comments[reply["id"]]
    deleted = run_conversation(reply_job(w, reply), w.ctx)
    w.gh.close_pull(REPO, w.number)
    closed = run_conversation(dataclasses.replace(reply_job(w, reply), comment_id=1), w.ctx)
    assert (edited.status, deleted.status, closed.status) == ("ignored", "ignored", "gone")
    assert w.stub.chat_requests == []


def test_an_outdated_thread_is_answered_with_the_head_s_code_and_says_so(w: World) -> None:
    top = gitneural_thread(w.gh, REPO, w.number)
    fixed = PLANTED.replace("return age > 18", "return age >= 18  # fixed")
    w.gh.push(REPO, "feature", {"people.py": fixed}, "Fix it")
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Fixed now?")
    assert run_conversation(reply_job(w, reply), w.ctx).status == "answered"
    prompt = chats(w)[0]["messages"][1]["content"]
    assert 'File "people.py", line 2, severity critical. The thread is outdated' in prompt
    assert "2|     return age >= 18  # fixed" in prompt


def test_model_overload_is_left_to_the_task_s_retry_and_nothing_is_posted(w: World) -> None:
    overloaded = Reply.http_error(429, "engine_overloaded_error", "busy", retry_after=3)
    w.stub.push(overloaded, overloaded)  # the client's own retry meets the second
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why?")
    job = reply_job(w, reply)
    with pytest.raises(TransientJobError) as raised:
        run_conversation(job, w.ctx)
    assert raised.value.retry_after == 3.0
    assert answers_in_thread(w.gh, REPO, w.number, top["id"]) == []
    assert run_conversation(job, w.ctx).status == "answered"  # the retry answers
    assert len(answers_in_thread(w.gh, REPO, w.number, top["id"])) == 1


def test_an_answer_over_a_spent_budget_is_not_sent_and_says_why_once(
    w: World,
    store_url: str,  # noqa: F811
) -> None:
    """Issue 13: a reply or /ask that would start over budget asks the model nothing; the
    answer's place says why, and when the budget resets, once."""
    w.ctx.store = open_store(store_url)
    upgrade(w.ctx.store)
    record_usage(
        w.ctx.store,
        installation_id=1,
        repo=REPO,
        pr_number=w.number,
        kind="review",
        usage=Usage(prompt_tokens=900, completion_tokens=200),
    )
    w.ctx.budgets = Budgets(repositories={REPO.lower(): 1_000})
    top = gitneural_thread(w.gh, REPO, w.number)
    reply = w.gh.add_thread_reply(REPO, w.number, top["id"], "Why is this a bug?")
    asked = w.gh.add_issue_comment(REPO, w.number, "/ask What does this change do?")
    for job in (reply_job(w, reply), ask_job(w, asked)):
        outcome = run_conversation(job, w.ctx)
        assert outcome.status == "budget", outcome
        assert "1,000" in outcome.detail and "resets" in outcome.detail
        again = run_conversation(job, w.ctx)
        assert (again.status, again.comment_id) == ("already-answered", outcome.comment_id)
    [notice] = answers_in_thread(w.gh, REPO, w.number, top["id"])
    assert notice["body"].startswith("Not answered: ") and "resets" in notice["body"]
    assert answered_comment(notice["body"], "reply") == reply["id"]
    answers = [c for c in w.gh.issue_comments(REPO, w.number) if c["id"] != asked["id"]]
    assert len(answers) == 1 and "Not answered: " in answers[0]["body"]
    assert chats(w) == []  # the model was asked nothing
    w.ctx.store.close()
