"""``/describe``: K3's suggested title and description of the pull request, posted once
as one comment the author can copy. GitNeural never edits the pull request (its title
and body are not written: the App may not, and a suggestion is the author's to take).

GitHub requests (five when it is answered), as for ``/ask``: the asker's write access
(1, kept ten minutes), the eyes reaction (1), the PR (1: closed or gone, nothing to do),
its comments since the command (1: an answer already there ends the job before any model
call), git fetches into the mirror, the settings from the default branch, K3's
``submit_description`` on the PR's whole change, and the comment (1), read back before
any retry.
"""

from __future__ import annotations

from bot.render.command_answers import description_body
from bot.review import describe_change
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun


def answer_describe(run: ConversationRun) -> ConversationOutcome:
    job = run.job
    opened = run.open_on_pr()
    if isinstance(opened, ConversationOutcome):
        return opened
    pull, _ = opened
    ready = run.ready_for_model(pull)
    if isinstance(ready, ConversationOutcome):
        return ready
    change, config = ready
    described = describe_change(
        change,
        job.requested_by or "someone",
        config,
        run.client(config),
        deadline=run.deadline(),
        learnings=run.learnings(pull),
    )
    posted = run.post_answer(description_body(described, to=job.comment_id))
    return ConversationOutcome("answered", posted, "a suggested title and description")
