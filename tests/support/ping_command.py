"""A throwaway command, ``/ping``, added through the registry alone: this module is all
of it (grammar, who, no model, its job and its handler). Run as GitNeural's entry point
(``python -m tests.support.ping_command serve …``) it registers ``/ping`` first, so the
webhook and the worker of that process route it like any built-in command."""

from __future__ import annotations

import sys

from bot.commands import Command, Invocation, register
from bot.render.conversation import notice_body
from bot.usecases.conversation.thread_run import ConversationOutcome, ConversationRun

PONG = "pong: the registry routed /ping"


def answer_ping(run: ConversationRun) -> ConversationOutcome:
    answered = run.answered_on_pr()
    if answered is not None:
        return ConversationOutcome("already-answered", answered, "answered before")
    posted = run.post_answer(notice_body(PONG, kind="answer", to=run.job.comment_id))
    return ConversationOutcome("answered", posted, "pong")


PING = Command(
    name="ping",
    usage="/ping",
    summary="answers pong",
    example="/ping",
    parse=lambda text: Invocation(),
    needs_model=False,
    job="conversation",
    handle=answer_ping,
)

if __name__ == "__main__":
    register(PING)
    from bot.cli.main import main

    raise SystemExit(main(sys.argv[1:]))
