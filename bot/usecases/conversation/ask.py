"""``/ask QUESTION``, answered once.

GitHub requests (five when it is answered): the asker's write access (1, kept ten
minutes: :mod:`bot.usecases.conversation.dispatch`), the eyes reaction (1), the PR (1: closed or
gone, nothing to do), its comments since the question (1: the question as it is now,
and an answer already posted to it, which ends the job before any model call), then git
fetches into the mirror, the repository's settings from its default branch, K3's
``submit_answer`` on the PR's change as a review sees it, and the answer (1), quoting
the question's first line, read back before any retry. With images on, a question that
links anything is read once more as GitHub renders it (1: its signed image links), and
its images, the description's and the change's go to K3 with it (from GitHub's
attachment hosts and the repository's blobs only). A blank question gets the usage, and
no model call.
"""

from __future__ import annotations

from collections.abc import Callable

from bot.domain.conversation import PullQuestion
from bot.gh.pulls import read_comment_bodies
from bot.render.conversation import USAGE, answer_body, notice_body
from bot.review import answer_question
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun
from bot.usecases.images import images_wanted, pull_images, worth_reading


def answer_ask(
    run: ConversationRun, ask_question: Callable[[str | None], str | None]
) -> ConversationOutcome:
    """``ask_question``: the question a comment asks, None when it is no ``/ask`` (the
    command's grammar, :mod:`bot.commands.ask`): the comment is read again here, as it
    may have been edited since it was queued."""
    job = run.job
    opened = run.open_on_pr()
    if isinstance(opened, ConversationOutcome):
        return opened
    pull, comments = opened
    asked = next((c for c in comments if c.id == job.comment_id), None)
    question = ask_question(asked.body) if asked is not None else None
    if asked is None:
        return ConversationOutcome("gone", detail="the /ask comment is gone")
    if question is None:
        return ConversationOutcome("ignored", detail="the comment is no longer /ask")
    if not question:
        posted = run.post_answer(notice_body(USAGE, kind="answer", to=job.comment_id))
        return ConversationOutcome("answered", posted, "the usage: nothing was asked")
    ready = run.ready_for_model(pull)
    if isinstance(ready, ConversationOutcome):
        return ready
    change, config = ready
    if images_wanted(config):
        # The question's images come first, then the description's and the files'.
        bodies = (
            read_comment_bodies(run.gh, job.repo, asked.id, on_401=run.forget_token)
            if worth_reading(asked.body)
            else None
        )
        change.images = pull_images(
            pull.body_html, pull.body, config, comment=bodies, command="/ask"
        )
    answer = answer_question(
        change,
        PullQuestion(question, job.requested_by or "someone"),
        config,
        run.client(config),
        deadline=run.deadline(),
        learnings=run.learnings(pull),
    )
    posted = run.post_answer(answer_body(question, answer.body, to=job.comment_id))
    return ConversationOutcome("answered", posted, "on the pull request")
