"""The chat messages of a conversation, rendered from ``prompts/*.j2``.

The order follows the review's, for K3's prefix cache: a system message that depends
only on the kind of conversation and on whether tools are offered, the trusted
instructions (the repository's learnings at their end), the code, then what changes
from one message to the next (the thread, the question). Every untrusted text (the
finding as posted, the diff, the code, the title and description, each comment, the
question) is redacted by the caller and fenced here, by fences none of them contains
(:class:`bot.review.prompt.Fences`).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from bot.domain.change import Change
from bot.domain.conversation import PullQuestion, ThreadQuestion
from bot.domain.results import SkippedFile
from bot.review.context.file_context import FileContext
from bot.review.context.learnings import NONE, ShownLearnings
from bot.review.prompt import Fences, change_variables, render_template
from bot.review.secrets.redaction import redact_path
from bot.text import printable

SYSTEM_TEMPLATE = "conversation_system.md.j2"
REPLY_TEMPLATE = "reply.md.j2"
ASK_TEMPLATE = "ask.md.j2"
DESCRIBE_TEMPLATE = "describe.md.j2"


def _system(kind: Literal["reply", "ask", "describe"], agentic: bool) -> dict[str, Any]:
    return {
        "role": "system",
        "content": render_template(SYSTEM_TEMPLATE, kind=kind, agentic=agentic),
    }


def _where(question: ThreadQuestion) -> str:
    f = question.finding
    lines = (
        f"line {f.start_line}"
        if f.start_line == f.end_line
        else f"lines {f.start_line}-{f.end_line}"
    )
    side = " of the old file" if f.side == "LEFT" else ""
    return f"File {_quoted(f.path)}, {lines}{side}"


def reply_messages(
    question: ThreadQuestion,
    *,
    change: Change,
    instructions: str,
    diff_text: str,
    code_text: str,
    agentic: bool,
    learnings: ShownLearnings = NONE,
) -> list[dict[str, Any]]:
    """``[system, user]`` for answering the last entry of ``question``'s thread.

    ``change`` is the redacted change (its title and description are shown); the
    finding, the entries, ``diff_text`` and ``code_text`` must be redacted already.
    """
    finding = question.finding
    title = printable(change.title).strip()
    description = printable(change.description).strip()
    texts = [printable(e.body).strip() for e in question.entries]
    finding_text = printable(finding.text).strip()
    fence = Fences([finding_text, diff_text, code_text, title, description, *texts])
    user = render_template(
        REPLY_TEMPLATE,
        instructions=printable(instructions).strip(),
        finding={
            "where": _where(question),
            "path": _quoted(finding.path),
            "severity": finding.severity,
            "text": fence(finding_text or "(empty)"),
        },
        diff=fence(diff_text) if diff_text else None,
        code=fence(code_text) if code_text else None,
        title=fence(title) if title else None,
        description=fence(description) if description else None,
        thread=[
            {"author": _login(e.author), "mine": e.by_gitneural, "text": fence(text or "(empty)")}
            for e, text in zip(question.entries, texts, strict=True)
        ],
        truncated=question.truncated,
        outdated=question.outdated,
        asker=_login(question.asker),
        agentic=agentic,
        **learnings.variables(),
    )
    return [_system("reply", agentic), {"role": "user", "content": user}]


def ask_messages(
    question: PullQuestion,
    *,
    change: Change,
    files: list[FileContext],
    skipped: list[SkippedFile],
    instructions: str,
    extra_context: str,
    agentic: bool,
    learnings: ShownLearnings = NONE,
) -> list[dict[str, Any]]:
    """``[system, user]`` for answering ``/ask`` about the (redacted) ``change``; the
    question must be redacted already."""
    text = printable(question.question).strip()
    variables, fence = change_variables(
        change=change,
        files=files,
        skipped=skipped,
        extra_context=extra_context,
        other_untrusted=[text],
    )
    user = render_template(
        ASK_TEMPLATE,
        instructions=printable(instructions).strip(),
        question=fence(text),
        asker=_login(question.asker),
        agentic=agentic,
        **learnings.variables(),
        **variables,
    )
    return [_system("ask", agentic), {"role": "user", "content": user}]


def describe_messages(
    asker: str,
    *,
    change: Change,
    files: list[FileContext],
    skipped: list[SkippedFile],
    instructions: str,
    extra_context: str,
    agentic: bool,
    learnings: ShownLearnings = NONE,
) -> list[dict[str, Any]]:
    """``[system, user]`` for ``/describe`` of the (redacted) ``change``: its title and
    description are fenced with the rest of the change, as the author's claims."""
    variables, _fence = change_variables(
        change=change, files=files, skipped=skipped, extra_context=extra_context
    )
    user = render_template(
        DESCRIBE_TEMPLATE,
        instructions=printable(instructions).strip(),
        asker=_login(asker),
        agentic=agentic,
        **learnings.variables(),
        **variables,
    )
    return [_system("describe", agentic), {"role": "user", "content": user}]


def _quoted(path: str) -> str:
    # As in the review prompt: a JSON string, so a file name cannot start a line, and a
    # secret in it redacted.
    return json.dumps(printable(redact_path(path)), ensure_ascii=False)


def _login(login: str) -> str:
    # A GitHub login is letters, digits and hyphens ("[bot]" for an App); anything else
    # is not shown outside a fence.
    clean = "".join(c for c in login if c.isalnum() or c in "-[]_")
    return clean[:60] or "someone"
