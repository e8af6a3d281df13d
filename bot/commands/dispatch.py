"""The worker's one door for conversation jobs: a job's kind names its handler, from the
registry (a command) or from :data:`NOT_COMMANDS` (a reply in a thread, a resolved
thread). A kind that is neither is :class:`~bot.commands.registry.UnknownJobKindError`,
raised before anything is read or posted: never answered by some other handler."""

from __future__ import annotations

from collections.abc import Callable

from bot.commands.registry import UnknownJobKindError, command_named, commands
from bot.jobs import ConversationJob
from bot.usecases.context import JobContext
from bot.usecases.conversation.dispatch import Handler, run_conversation_job
from bot.usecases.conversation.replies import answer_in_thread
from bot.usecases.conversation.resolutions import record_resolution
from bot.usecases.conversation.thread_run import ConversationOutcome
from bot.usecases.errors import unfenced

__all__ = ["UnknownJobKindError", "handler_for", "job_kind", "run_conversation"]

#: Conversation jobs no comment command asks for: ``(handler, needs write access, metric)``.
NOT_COMMANDS: dict[str, tuple[Handler, bool, str]] = {
    "reply": (answer_in_thread, True, "reply"),
    # GitHub lets only people with write access (and the author) resolve a thread.
    "resolved": (record_resolution, False, "learning"),
}


def handler_for(kind: str) -> tuple[Handler, bool]:
    """The handler of a job's kind and whether its asker must have write access."""
    if kind in NOT_COMMANDS:
        handle, permission, _metric = NOT_COMMANDS[kind]
        return handle, permission
    command = command_named(kind)
    if command.job != "conversation" or command.handle is None:
        raise UnknownJobKindError(f"/{kind} is not answered by a conversation job")
    return command.handle, True


def run_conversation(
    job: ConversationJob, ctx: JobContext, fence: Callable[[], None] = unfenced
) -> ConversationOutcome:
    """Answer ``job`` with its kind's handler; raises ``UnknownJobKindError`` first.
    ``fence``: asked of the store before each post (``ConversationRun``)."""
    handle, permission = handler_for(job.trigger)
    return run_conversation_job(job, ctx, handle, needs_permission=permission, fence=fence)


def job_kind(job: ConversationJob | None) -> str:
    """The kind ``job`` is counted under in metrics (``command`` for an unknown one)."""
    if job is None:
        return "reply"  # a message that is no job: its kind is unknown
    if job.trigger in NOT_COMMANDS:
        return NOT_COMMANDS[job.trigger][2]
    found = commands().get(job.trigger)
    return found.metric if found is not None else "command"
